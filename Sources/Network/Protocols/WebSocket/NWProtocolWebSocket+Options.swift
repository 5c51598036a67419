import Dispatch
import NetworkCore
import NetworkSync

extension NWProtocolWebSocket {
    /// WebSocket settings for a connection (the client side) or a listener (the server side).
    /// The properties may be read and written from any thread.
    public final class Options: NWProtocolOptions, @unchecked Sendable {
        private let settings: Lock<Settings>

        private struct Settings: @unchecked Sendable {
            var engine = WebSocketConfiguration()
            /// `maximumMessageSize` as set (0: the engine's bound).
            var maximumMessageSize = 0
            var version = NWProtocolWebSocket.Version.version13
        }

        /// Options for WebSocket `version`.
        public init(_ version: NWProtocolWebSocket.Version = .version13) {
            settings = Lock(Settings(version: version))
            super.init(definition: NWProtocolWebSocket.definition)
        }

        private init(settings: Settings) {
            self.settings = Lock(settings)
            super.init(definition: NWProtocolWebSocket.definition)
        }

        /// Answer the peer's pings with pongs automatically; those pings are then not
        /// delivered. Off by default: pings arrive as `.ping` messages for the application to
        /// answer.
        public var autoReplyPing: Bool {
            get { settings.withLock { $0.engine.autoReplyPing } }
            set { settings.withLock { $0.engine.autoReplyPing = newValue } }
        }

        /// The largest message taken from the peer, in bytes; a larger one closes the connection
        /// with code 1009 and fails it. 0 (the default) means the engine's bound, 64 MiB.
        public var maximumMessageSize: Int {
            get { settings.withLock { $0.maximumMessageSize } }
            set { settings.withLock { $0.maximumMessageSize = max(newValue, 0) } }
        }

        /// Speak WebSocket frames from the first byte, without the HTTP upgrade (for a
        /// connection whose upgrade happened elsewhere).
        public var skipHandshake: Bool {
            get { settings.withLock { $0.engine.skipHandshake } }
            set { settings.withLock { $0.engine.skipHandshake = newValue } }
        }

        /// Headers a client adds to its upgrade request.
        public func setAdditionalHeaders(_ headers: [(name: String, value: String)]) {
            settings.withLock { $0.engine.additionalHeaders = headers }
        }

        /// A client: the subprotocols it offers, most wanted first. A listener without a request
        /// handler: the subprotocols it accepts (it picks the first one the client offers that
        /// is in this list).
        public func setSubprotocols(_ subprotocols: [String]) {
            settings.withLock { $0.engine.subprotocols = subprotocols }
        }

        /// A listener: `handler` sees each client's offered subprotocols and request headers on
        /// `queue`, and answers whether to accept the upgrade, with which subprotocol and which
        /// extra response headers.
        @preconcurrency public func setClientRequestHandler(
            _ queue: DispatchQueue,
            handler: @escaping @Sendable ([String], [(name: String, value: String)]) -> NWProtocolWebSocket.Response
        ) {
            let engineHandler: WebSocketRequestHandler = { subprotocols, headers, reply in
                queue.async {
                    let response = handler(subprotocols, headers)
                    reply(
                        WebSocketServerDecision(
                            accept: response.status == .accept, subprotocol: response.subprotocol,
                            additionalHeaders: response.additionalHeaders ?? []))
                }
            }
            settings.withLock { $0.engine.requestHandler = engineHandler }
        }

        /// The engine's settings; `endpoint` gives a client its request target and `Host` header.
        func webSocketConfiguration(endpoint: NWEndpoint?) -> WebSocketConfiguration {
            var configuration = settings.withLock { settings in
                var engine = settings.engine
                if settings.maximumMessageSize > 0 { engine.maximumMessageSize = settings.maximumMessageSize }
                return engine
            }
            if case .url(let url) = endpoint {
                configuration.requestTarget = url.webSocketRequestTarget
                configuration.hostHeader = url.webSocketHostHeader
            }
            return configuration
        }

        package override func copyOptions() -> NWProtocolOptions {
            Options(settings: settings.withLock { $0 })
        }
    }
}
