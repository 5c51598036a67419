import NetworkSync

extension NWProtocolFramer {
    /// The framer's metadata for one message: values of your own by key. A sender attaches one
    /// to a send's ``NWConnection/ContentContext``; the framer sees it in `handleOutput`, and
    /// the one it delivers with input comes back on the receive's context.
    public class Message: NWProtocolMetadata, @unchecked Sendable {
        private let values = Lock(FramerMessageValues())

        /// An empty message for the framer `definition` describes (for sending).
        public init(definition: NWProtocolFramer.Definition) {
            super.init(definition: definition)
        }

        /// An empty message of the framer that `instance` runs (inside the framer).
        public init(instance: NWProtocolFramer.Instance) {
            super.init(definition: instance.definition)
        }

        /// A value of your own for this message, by key (nil removes it).
        public subscript(key: String) -> Any? {
            get { values.withLock { $0[key] } }
            set { values.withLock { $0[key] = newValue } }
        }
    }
}
