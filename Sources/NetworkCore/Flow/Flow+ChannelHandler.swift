import NIOCore

/// An outbound TCP flow is the last handler of its channels' pipelines itself (a separate
/// handler object would cost every connection a malloc chunk for its whole life): it takes the
/// reads, end of stream and errors, with the channel they came from, so that it can ignore a
/// stale attempt's events. The pipeline holds the flow strongly, as `OwningFlowLink` does, and
/// the cycle (flow, channel, pipeline, flow) ends when the channel closes and NIO removes the
/// handler. Other channels (datagrams, accepted flows) get a `FlowChannelHandler`, which hands
/// the events on to these methods.
extension Flow: ChannelInboundHandler {
    package typealias InboundIn = ByteBuffer

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        transportRead(Self.unwrapInboundIn(data), channel: context.channel)
    }

    package func channelActive(context: ChannelHandlerContext) {
        transportActive(channel: context.channel)
        context.fireChannelActive()
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        transportReadComplete(channel: context.channel)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            transportEndOfStream(channel: context.channel)
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        transportInactive(channel: context.channel)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        transportError(FlowError(error), channel: context.channel)
    }
}
