import NIOCore

/// Sits in a datagram listener's pipeline and routes each datagram to its peer's flow, or, on a
/// QUIC listener, to `FlowListener.receivedQUICDatagram` (clients' first Initials, and what
/// arrives for a connection still being set up).
final class DatagramDemultiplexer: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private weak var listener: FlowListener?
    private let isQUIC: Bool

    init(listener: FlowListener, quic: Bool = false) {
        self.listener = listener
        self.isQUIC = quic
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = Self.unwrapInboundIn(data)
        if isQUIC {
            listener?.receivedQUICDatagram(envelope, listening: context.channel)
        } else if let segmentSize = envelope.metadata?.segmentSize {
            // Datagrams the kernel coalesced (`DatagramReceiveOffload`): each on its own, with
            // the burst's markings.
            var metadata = envelope.metadata
            metadata?.segmentSize = nil
            listener?.receivedDatagrams(
                DatagramBatch(bytes: envelope.data, segmentSize: segmentSize), from: envelope.remoteAddress,
                metadata: metadata, channel: context.channel)
        } else {
            listener?.receivedDatagram(envelope, channel: context.channel)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !isQUIC { listener?.datagramReadComplete() }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        listener?.datagramSocketClosed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP errors for one peer must not take the shared socket down.
    }
}
