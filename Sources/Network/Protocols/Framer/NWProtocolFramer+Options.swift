import NetworkSync

extension NWProtocolFramer {
    /// Puts a framer in a protocol stack; values set on it by key reach every instance of the
    /// framer through ``NWProtocolFramer/Instance/options``.
    public class Options: NWProtocolOptions, @unchecked Sendable {
        private let values: Lock<[String: UncheckedValue]>

        /// Options for the framer `definition` describes.
        public init(definition: NWProtocolFramer.Definition) {
            values = Lock([:])
            super.init(definition: definition)
        }

        private init(definition: NWProtocolFramer.Definition, values: [String: UncheckedValue]) {
            self.values = Lock(values)
            super.init(definition: definition)
        }

        /// A value of your own for the framer, by key (nil removes it).
        public subscript(key: String) -> Any? {
            get { values.withLock { $0[key]?.value } }
            set { values.withLock { $0[key] = newValue.map(UncheckedValue.init) } }
        }

        /// The framer's definition.
        package var framerDefinition: NWProtocolFramer.Definition {
            // Made only with a framer definition (the initializers above).
            definition as! NWProtocolFramer.Definition
        }

        package override func copyOptions() -> NWProtocolOptions {
            Options(definition: framerDefinition, values: values.withLock { $0 })
        }
    }
}

/// A value of any type kept in a framer's options or message. The framer reads it on the
/// connection's context and the application sets it before or after; the caller keeps such
/// values safe to share, as with Apple's `Any`-typed subscripts.
struct UncheckedValue: @unchecked Sendable {
    let value: Any
    init(_ value: Any) { self.value = value }
}
