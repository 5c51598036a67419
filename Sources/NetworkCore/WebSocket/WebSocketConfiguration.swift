/// A connection's or listener's WebSocket settings, taken from `NWProtocolWebSocket.Options`
/// when the connection or listener is made.
package struct WebSocketConfiguration: Sendable {
    /// The largest message taken from the peer when the options set none (0).
    package static let defaultMaximumMessageSize = 64 << 20

    /// Answer the peer's pings with pongs without showing them to the application.
    package var autoReplyPing = false
    /// The largest message accepted from the peer, in bytes.
    package var maximumMessageSize = WebSocketConfiguration.defaultMaximumMessageSize
    /// No HTTP upgrade: frames from the first byte.
    package var skipHandshake = false
    /// Client: headers added to the upgrade request.
    package var additionalHeaders: [(name: String, value: String)] = []
    /// Client: the subprotocols offered, in order of preference. Server without a request handler:
    /// the subprotocols accepted (the first one the client offers that is in this list wins).
    package var subprotocols: [String] = []
    /// Client: the request target (path and query) of the upgrade request.
    package var requestTarget = "/"
    /// Client: the `Host` header (nil: the target's host and port, as the engine knows them).
    package var hostHeader: String?
    /// Server: decides about each upgrade request (nil: accept every one).
    package var requestHandler: WebSocketRequestHandler?

    package init() {}
}

/// Decides about a client's upgrade request: it gets the subprotocols the client offered and the
/// request's headers, and calls `reply` once (from any thread) with the decision.
package typealias WebSocketRequestHandler = @Sendable (
    _ subprotocols: [String], _ headers: [(name: String, value: String)],
    _ reply: @escaping @Sendable (WebSocketServerDecision) -> Void
) -> Void

/// A server's answer to an upgrade request.
package struct WebSocketServerDecision: Sendable {
    package var accept: Bool
    /// The subprotocol chosen (accepted requests).
    package var subprotocol: String?
    /// Headers added to the response.
    package var additionalHeaders: [(name: String, value: String)]

    package init(accept: Bool, subprotocol: String? = nil, additionalHeaders: [(name: String, value: String)] = []) {
        self.accept = accept
        self.subprotocol = subprotocol
        self.additionalHeaders = additionalHeaders
    }
}
