import NIOCore

/// What a QUIC client connection keeps to follow the machine's paths (connection migration):
/// its hold on the path engine, and the local address its socket has now. Owned by the
/// connection's `QUICDatagramHandler`, on its loop; `cancel` ends the updates (the subscription
/// holds the handler until then).
final class QUICPathFollower {
    private let subscription: PathSubscription
    /// The socket's local address, which a move changes (NIO's channel keeps the first one).
    var local: SocketAddress
    /// Told the new local address after each move (the facade, for the connection's path).
    var onMove: ((SocketAddress) -> Void)?

    /// Subscribes; `pathsChanged` runs on the path engine's loop, first at once.
    init(local: SocketAddress, pathsChanged: @escaping @Sendable () -> Void) {
        self.local = local
        subscription = PathSubscription { _ in pathsChanged() }
    }

    func cancel() {
        subscription.cancel()
    }
}
