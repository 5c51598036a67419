/// WebSocket (RFC 6455) as an application protocol: message framing over TCP or TLS, begun with
/// an HTTP/1.1 upgrade.
///
/// Put ``NWProtocolWebSocket/Options`` first in `defaultProtocolStack.applicationProtocols`
/// (above TLS for `wss`). Each send is then one message, whose kind comes from the
/// ``NWProtocolWebSocket/Metadata`` in its context, and each receive returns one whole message
/// with its metadata.
public final class NWProtocolWebSocket: NWProtocol, @unchecked Sendable {
    /// Identifies WebSocket in a stack and in metadata lookups (named `websocket`).
    public static let definition: NWProtocolDefinition = NWProtocolDefinition(name: "websocket")
}
