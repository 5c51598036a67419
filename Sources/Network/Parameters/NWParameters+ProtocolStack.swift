import NetworkSync

extension NWParameters {
    /// The protocols a connection uses, from the application down to IP.
    ///
    /// The stack is a reference type shared with its parameters: changing it changes the
    /// parameters. It may be used from any thread.
    public final class ProtocolStack: Sendable {
        private struct State {
            var application: [NWProtocolOptions]
            var transport: NWProtocolOptions?
            var internet: NWProtocolIP.Options
        }

        private let state: Lock<State>

        /// Creates a stack from its layers.
        package init(
            applicationProtocols: [NWProtocolOptions] = [],
            transportProtocol: NWProtocolOptions? = nil,
            internetProtocol: NWProtocolIP.Options = NWProtocolIP.Options()
        ) {
            state = Lock(State(application: applicationProtocols, transport: transportProtocol, internet: internetProtocol))
        }

        /// The protocols above the transport, closest to the application first (for example a
        /// TLS options object above TCP).
        public var applicationProtocols: [NWProtocolOptions] {
            get { state.withLock { $0.application } }
            set { state.withLock { $0.application = newValue } }
        }

        /// The transport protocol (TCP, UDP or QUIC options), or nil when the stack has none.
        public var transportProtocol: NWProtocolOptions? {
            get { state.withLock { $0.transport } }
            set { state.withLock { $0.transport = newValue } }
        }

        /// The IP layer's options.
        ///
        /// Reading always returns the same ``NWProtocolIP/Options`` object, so the usual pattern
        /// `stack.internetProtocol as! NWProtocolIP.Options` followed by setting its properties
        /// changes this stack. Assigning another `NWProtocolIP.Options` replaces it; assigning
        /// nil or any other kind of options is ignored, since every stack has an IP layer.
        public var internetProtocol: NWProtocolOptions? {
            get { state.withLock { $0.internet } }
            set {
                guard let options = newValue as? NWProtocolIP.Options else { return }
                state.withLock { $0.internet = options }
            }
        }

        /// The IP layer's options, typed.
        package var ipOptions: NWProtocolIP.Options {
            state.withLock { $0.internet }
        }

        /// A stack whose every options object is an independent copy of this one's.
        package func deepCopy() -> ProtocolStack {
            let current = state.withLock { $0 }
            return ProtocolStack(
                applicationProtocols: current.application.map { $0.copyOptions() },
                transportProtocol: current.transport?.copyOptions(),
                internetProtocol: (current.internet.copyOptions() as? NWProtocolIP.Options) ?? NWProtocolIP.Options()
            )
        }

        /// The definitions' names from the top of the stack to IP, for descriptions.
        package var layerNames: [String] {
            let current = state.withLock { $0 }
            var names = current.application.map(\.definition.name)
            if let transport = current.transport { names.append(transport.definition.name) }
            names.append(current.internet.definition.name)
            return names
        }
    }
}
