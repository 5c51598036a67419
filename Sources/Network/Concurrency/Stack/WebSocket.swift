import Foundation

/// WebSocket messages (RFC 6455) over TCP or TLS: each send is one text or binary message,
/// each receive one message with its opcode (and close code) in ``Metadata``.
public struct WebSocket: NetworkProtocolOptions, OneToOneProtocol, MessageProtocol, Sendable {
    public typealias BelowProtocol = TLS
    public typealias ContentType = Data
    public typealias LegacyMessage = NWProtocolWebSocket.Metadata

    /// What a received WebSocket message reports besides its bytes.
    public struct Metadata: NetworkMetadataProtocol {
        /// The message is whole (always, for receives of whole messages).
        public let isComplete: Bool
        /// No message follows this one (a close).
        public let lastMessage: Bool
        /// The classic metadata, the ``NWProtocolWebSocket/Metadata`` among it.
        public let other: [NWProtocolMetadata]
        /// Text, binary, close, ping or pong.
        public let opcode: NWProtocolWebSocket.Opcode
        /// A close message's code (nil for other messages).
        public let closeCode: NWProtocolWebSocket.CloseCode?
    }

    private var below: any StackLayer
    private var edits: [@Sendable (NWProtocolWebSocket.Options) -> Void] = []

    /// WebSocket over the stream `builder` makes (`TCP()` for ws, `TLS()` for wss).
    public init<BelowProtocol: StreamProtocol>(@ProtocolStackBuilder<BelowProtocol> _ builder: () -> BelowProtocol) {
        below = UnsupportedStackLayer.layer(builder())
    }

    private func with(_ edit: @escaping @Sendable (NWProtocolWebSocket.Options) -> Void) -> WebSocket {
        var copy = self
        copy.edits.append(edit)
        return copy
    }

    /// Headers a client adds to its upgrade request (or a server to its response).
    public func additionalHeaders(_ headers: [(name: String, value: String)]) -> WebSocket {
        let pairs = headers.map { HeaderPair(name: $0.name, value: $0.value) }
        return with { $0.setAdditionalHeaders(pairs.map { ($0.name, $0.value) }) }
    }
    /// Whether pings are answered with pongs by the stack (the default) or delivered.
    public func autoReplyPing(_ enabled: Bool) -> WebSocket { with { $0.autoReplyPing = enabled } }
    /// The largest message accepted; a larger one closes the connection with 1009.
    public func maximumMessageSize(_ size: Int) -> WebSocket { with { $0.maximumMessageSize = size } }
    /// Starts framing at once, without the HTTP upgrade (both sides must agree).
    public func skipHandshake(_ skip: Bool) -> WebSocket { with { $0.skipHandshake = skip } }
    /// Subprotocols a client offers or a server accepts, in order of preference.
    public func subprotocols(_ subprotocols: [String]) -> WebSocket { with { $0.setSubprotocols(subprotocols) } }

    private struct HeaderPair: Sendable {
        let name: String
        let value: String
    }
}

extension WebSocket: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        let options = NWProtocolWebSocket.Options()
        for edit in edits { edit(options) }
        plan.application.append(options)
        below.addLayers(to: &plan)
    }
}
