import NIOCore

/// A QUIC connection a listener accepted, from the client's first Initial until its own
/// socket (bound to the listener's port, connected to the client) carries it: datagrams that
/// reach the listening socket meanwhile wait here (a few: the client's Initial may take more
/// than one datagram), then go to the connection's handler. Confined to the listener's loop.
final class QUICServerConnection {
    /// The client's address: its first, then wherever it moved (`moved(to:)`).
    private(set) var remote: SocketAddress
    /// The connection IDs its server side issued and has not seen retired, by which the
    /// listener finds it when the client moves.
    var connectionIDs: Set<[UInt8]> = []
    private var handler: QUICDatagramHandler?
    /// Datagrams that came before the socket, with their ECN codepoints.
    private var waiting: [(datagram: ByteBuffer, ecn: UInt8)] = []
    /// Until the handshake is done (or failed): the listener bounds how many are.
    var handshaking = true

    /// Datagrams kept while the socket is being set up; more are dropped (QUIC resends).
    static let waitingLimit = 16

    init(remote: SocketAddress, first: ByteBuffer, ecn: UInt8) {
        self.remote = remote
        self.waiting = [(first, ecn)]
    }

    /// A datagram that reached the listening socket from the client's address, or (`source`)
    /// one from another address that carries one of the connection's IDs.
    func deliver(_ datagram: ByteBuffer, ecn: UInt8, from source: SocketAddress? = nil) {
        if let handler {
            handler.receiveForwarded(datagram, from: source ?? remote, ecn: ecn)
        } else if source != nil {
            // (Not attached yet: nothing to move.)
            return
        } else if waiting.count < Self.waitingLimit {
            waiting.append((datagram, ecn))
        }
    }

    /// The client moved to `address` and the connection's socket with it.
    func moved(to address: SocketAddress) {
        remote = address
    }

    /// The connection's own socket is up, with its handler: what waited goes to it.
    func attach(_ handler: QUICDatagramHandler) {
        self.handler = handler
        let datagrams = waiting
        waiting = []
        for (datagram, ecn) in datagrams { handler.receiveForwarded(datagram, from: remote, ecn: ecn) }
    }
}
