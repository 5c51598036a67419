import NIOCore

/// Under the framers of a connected UDP channel (over DTLS when there is, whose handler hands up
/// each record's plaintext the same way): hands each datagram's bytes up as input, so the framer
/// host sees the same byte input over UDP as over a stream. (Writes need no change: a connected
/// datagram channel and the DTLS handler take plain buffers.)
final class DatagramPayloads: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias InboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(Self.wrapInboundOut(Self.unwrapInboundIn(data).data))
    }
}
