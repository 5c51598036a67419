/// What the upgrade handshake settled, kept for the connection's `NWProtocolWebSocket.Metadata`:
/// the subprotocol in use, and the other side's headers (a client keeps the server's response
/// headers; a server, the client's request headers).
package struct WebSocketHandshakeFacts: Sendable {
    package var subprotocol: String?
    package var headers: [(name: String, value: String)]

    package init(subprotocol: String?, headers: [(name: String, value: String)]) {
        self.subprotocol = subprotocol
        self.headers = headers
    }
}
