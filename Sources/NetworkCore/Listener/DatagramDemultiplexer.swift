import NIOCore

/// Sits in a datagram listener's pipeline and routes each datagram to its peer's flow.
final class DatagramDemultiplexer: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private weak var listener: FlowListener?

    init(listener: FlowListener) { self.listener = listener }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        listener?.receivedDatagram(Self.unwrapInboundIn(data), channel: context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        listener?.datagramSocketClosed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP errors for one peer must not take the shared socket down.
    }
}
