import NIOCore

/// The last handler of a flow's pipeline where the flow cannot be it itself (see
/// `Flow+ChannelHandler`): a datagram channel's (other messages) or an accepted flow's (held
/// weakly). It hands every event on to the flow's own handler methods. How it holds the flow is
/// `Link`'s choice (`OwningFlowLink` for outbound flows, `WeakFlowLink` for accepted ones); it
/// lets go when NIO removes it as the channel closes.
final class FlowChannelHandler<Message: FlowInboundMessage, Link: FlowLink>: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = Message

    private var link: Link

    init(flow: Flow) {
        self.link = Link(flow)
    }

    private var flow: Flow? { link.flow }

    func handlerRemoved(context: ChannelHandlerContext) {
        link.release()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let flow else { return }
        let message = Self.unwrapInboundIn(data)
        if let framed = message as? FramedMessage {
            flow.transportReadMessage(framed, channel: context.channel)
        } else {
            flow.transportRead(message.payload, channel: context.channel)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        guard let flow else { return context.fireChannelActive() }
        flow.channelActive(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flow?.channelReadComplete(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let flow else { return context.fireUserInboundEventTriggered(event) }
        flow.userInboundEventTriggered(context: context, event: event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        flow?.channelInactive(context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        flow?.errorCaught(context: context, error: error)
    }
}

/// What a flow's pipeline delivers: stream bytes or datagrams.
protocol FlowInboundMessage {
    var payload: ByteBuffer { get }
}

extension ByteBuffer: FlowInboundMessage {
    var payload: ByteBuffer { self }
}

extension FramedMessage: FlowInboundMessage {
    var payload: ByteBuffer { bytes }
}

extension AddressedEnvelope: FlowInboundMessage where DataType == ByteBuffer {
    var payload: ByteBuffer { data }
}
