import NIOCore

/// The last handler of a flow's pipeline: forwards reads, end of stream and errors to the flow.
/// It knows which channel it belongs to so a flow can ignore a stale attempt's events. How it
/// holds the flow is `Link`'s choice (`OwningFlowLink` for the channels of outbound flows,
/// `WeakFlowLink` for accepted ones); it lets go when NIO removes it as the channel closes.
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
        flow.transportRead(Self.unwrapInboundIn(data).payload, channel: context.channel)
    }

    func channelActive(context: ChannelHandlerContext) {
        flow?.transportActive(channel: context.channel)
        context.fireChannelActive()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flow?.transportReadComplete(channel: context.channel)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            flow?.transportEndOfStream(channel: context.channel)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        flow?.transportInactive(channel: context.channel)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        flow?.transportError(FlowError(error), channel: context.channel)
    }
}

/// What a flow's pipeline delivers: stream bytes or datagrams.
protocol FlowInboundMessage {
    var payload: ByteBuffer { get }
}

extension ByteBuffer: FlowInboundMessage {
    var payload: ByteBuffer { self }
}

extension AddressedEnvelope: FlowInboundMessage where DataType == ByteBuffer {
    var payload: ByteBuffer { data }
}
