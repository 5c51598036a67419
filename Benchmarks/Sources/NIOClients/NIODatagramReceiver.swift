// The receive side of udp-offload.sh on plain SwiftNIO: a DatagramBootstrap bound to the port,
// reading up to 64 datagrams per syscall (recvmmsg), and a handler that counts them.
import BenchSupport
import NIOCore
import NIOPosix

final class DatagramCountingHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let counter: DatagramCounter

    init(counter: DatagramCounter) { self.counter = counter }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.counter.received(bytes: self.unwrapInboundIn(data).data.readableBytes)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        self.counter.error()
    }
}

/// Binds host:port and counts every datagram in `counter`; returns once bound.
public func nioStartUDPReceiver(
    group: EventLoopGroup, host: String, port: Int, counter: DatagramCounter, vectorReads: Int = 64
) throws -> Channel {
    try DatagramBootstrap(group: group)
        .channelOption(.datagramVectorReadMessageCount, value: vectorReads)
        // NIO splits one receive buffer into the vector's messages: 2 KiB (its default buffer) each.
        .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 2048 * max(1, vectorReads)))
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(DatagramCountingHandler(counter: counter))
            }
        }
        .bind(host: host, port: port).wait()
}
