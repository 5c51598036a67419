import NIOCore

/// Where `DatagramWriter` hands datagrams to NIO: a handler's context (a QUIC connection's) or a
/// channel (a multicast group's, through `ChannelDatagramOutbound`).
protocol DatagramOutbound {
    var eventLoop: EventLoop { get }
    func write(datagram: AddressedEnvelope<ByteBuffer>, promise: EventLoopPromise<Void>?)
    func flushDatagrams()
}

extension ChannelHandlerContext: DatagramOutbound {
    func write(datagram: AddressedEnvelope<ByteBuffer>, promise: EventLoopPromise<Void>?) {
        write(NIOAny(datagram), promise: promise)
    }

    func flushDatagrams() { flush() }
}
