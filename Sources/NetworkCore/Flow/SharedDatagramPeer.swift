import NIOCore

/// A listener's datagram socket as one peer's flow sees it: where its datagrams go, and what to
/// call when the flow no longer needs the socket.
final class SharedDatagramPeer: Sendable {
    let channel: Channel
    let remote: SocketAddress
    let release: @Sendable () -> Void

    init(channel: Channel, remote: SocketAddress, release: @escaping @Sendable () -> Void) {
        self.channel = channel
        self.remote = remote
        self.release = release
    }
}
