#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Sits in the server channel's pipeline in front of NIO's accept handler and sees every accepted
/// child first: it enforces the listener's budget and local-only rule and hands the child over.
final class AcceptGate: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = Channel

    private weak var listener: FlowListener?

    init(listener: FlowListener) { self.listener = listener }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let child = Self.unwrapInboundIn(data)
        guard let listener, listener.accepted(child) else {
            // Over budget or refused: close it so the peer is not left hanging.
            if let provider = child as? SocketOptionProvider {
                _ = provider.setSoLinger(linger(l_onoff: 1, l_linger: 0))
            }
            child.close(promise: nil)
            return
        }
        // Let NIO register the child on its loop.
        context.fireChannelRead(data)
    }
}
