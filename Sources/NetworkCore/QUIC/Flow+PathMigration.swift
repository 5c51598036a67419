import NIOCore

/// A QUIC client connection that moves to new local addresses (`QUICDatagramHandler.followPaths`),
/// as the flow's facade sees it.
extension Flow {
    /// The path follower of a QUIC connection this flow owns the socket of, if it follows paths.
    private var quicPathFollower: QUICPathFollower? {
        guard transportKind.isQUIC, let channel = transport.channel else { return nil }
        return (try? channel.pipeline.syncOperations.handler(type: QUICDatagramHandler.self))?.pathFollower
    }

    /// The socket's local address now: NIO's channel keeps the one it was connected with, which a
    /// QUIC connection's move replaces.
    var localAddressOnLoop: SocketAddress? {
        quicPathFollower?.local ?? transport.channel?.localAddress
    }

    /// Calls `handler` on the loop with the connection's new local address after each move; does
    /// nothing for a flow whose connection does not follow paths. Call on the loop.
    package func onLocalAddressMoveOnLoop(_ handler: @escaping @Sendable (FlowAddress) -> Void) {
        eventLoop.preconditionInEventLoop()
        quicPathFollower?.onMove = { handler(FlowAddress($0)) }
    }
}
