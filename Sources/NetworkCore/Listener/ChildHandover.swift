import NIOCore

/// Waits in an accepted child's pipeline for it to become active, hands it over, and leaves.
final class ChildHandover: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny

    private weak var listener: FlowListener?

    init(listener: FlowListener) { self.listener = listener }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { handOver(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        handOver(context: context)
        context.fireChannelActive()
    }

    func handOver(context: ChannelHandlerContext) {
        guard let listener else {
            context.close(promise: nil)
            return
        }
        let listenerRef = listener
        self.listener = nil
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        listenerRef.handOver(context.channel)
    }
}
