import NIOCore

/// A datagram channel as `DatagramWriter`'s way into NIO, for writers that sit outside its
/// pipeline (a multicast group's sends come from the listener, not from a handler).
struct ChannelDatagramOutbound: DatagramOutbound {
    let channel: Channel

    var eventLoop: EventLoop { channel.eventLoop }

    func write(datagram: AddressedEnvelope<ByteBuffer>, promise: EventLoopPromise<Void>?) {
        channel.write(datagram, promise: promise)
    }

    func flushDatagrams() { channel.flush() }
}
