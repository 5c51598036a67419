/// What a flow's stack negotiated, boxed (most flows have neither): the TLS session, and the
/// WebSocket handshake's outcome. Inline the facts would make every idle flow larger.
final class StackSessionBox: Sendable {
    let tls: TLSSessionFacts?
    let webSocket: WebSocketHandshakeFacts?

    init(tls: TLSSessionFacts?, webSocket: WebSocketHandshakeFacts? = nil) {
        self.tls = tls
        self.webSocket = webSocket
    }
}
