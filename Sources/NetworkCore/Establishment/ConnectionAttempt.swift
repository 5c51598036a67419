import NIOCore

/// One connection attempt of a race: its socket (once NIO created it) and how far it got. The
/// race creates it, `ClientStackBuilder` fills it in as the stack comes up. Touched on the
/// flow's event loop only.
final class ConnectionAttempt: @unchecked Sendable {
    let address: SocketAddress
    let started: NIODeadline
    var channel: Channel?
    /// Set when the racer gave up on it; a socket that shows up later is closed at once.
    var cancelled = false
    /// When the transport connected (before any TLS handshake).
    var connected: NIODeadline?
    var tlsFacts: TLSSessionFacts?
    /// What the WebSocket upgrade settled, when the stack has WebSocket.
    var webSocketFacts: WebSocketHandshakeFacts?
    var tlsHandshakeDuration: TimeAmount?
    /// Whether it wrote the Fast Open data first.
    var wroteInitialData = false
    /// Our own connect of a plain TCP socket while it is under way (see `PendingConnect`).
    var pendingConnect: PendingConnect?
    /// The socket's descriptor when we connected it ourselves (NIO owns it; the flow may keep a
    /// duplicate for writes from the sender's thread).
    var descriptor: Int32?

    init(address: SocketAddress, started: NIODeadline) {
        self.address = address
        self.started = started
    }
}
