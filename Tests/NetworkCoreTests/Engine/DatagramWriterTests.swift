#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import NetworkSystem
import PeerSupport
import Testing

@testable import NetworkCore

/// `DatagramWriter` on a real socket whose path refuses a segmented send: a veth pair with an
/// MTU of 1,300 into a network namespace, where a Python socket prints the size of each
/// datagram it gets. The kernel refuses segments larger than the path's packets (`EMSGSIZE`);
/// the writer must then turn segmentation off and send those packets one by one (the kernel
/// fragments each), losing none.
@Suite("Engine.DatagramWriter", .serialized)
struct DatagramWriterTests {
    /// Keeps the pipeline's context, and a writer working through it (used on the loop only,
    /// hence unchecked).
    final class WriterHost: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let writer = DatagramWriter()
        var context: ChannelHandlerContext?
        func handlerAdded(context: ChannelHandlerContext) { self.context = context }
        func handlerRemoved(context: ChannelHandlerContext) {
            // (The context holds the handler: keeping it would leak both.)
            self.context = nil
            writer.release()
        }
    }

    /// A batch of `count` packets of `size` bytes, segmented.
    static func batch(count: Int, size: Int) -> DatagramBatch {
        DatagramBatch(bytes: ByteBuffer(repeating: 0x51, count: count * size), segmentSize: size)
    }

    @Test("segments the path takes go in one send; segments larger than its packets are refused, and the writer sends them one by one instead")
    func fallsBackToSinglePackets() async throws {
        guard let namespace = TestNamespace.make() else { return }
        defer { namespace.tearDown() }
        let taken = try ShortTool.check(namespace.ip, ["-o", "addr", "show"])
        let subnet = (1...250).shuffled().first { !taken.contains("10.80.\($0).") } ?? 1
        let (inside, outside) = try namespace.link(addresses: ["10.80.\(subnet).2/24"], to: nil, otherAddresses: ["10.80.\(subnet).1/24"])
        try ShortTool.check(namespace.ip, ["-n", namespace.name, "link", "set", "dev", inside, "mtu", "1300"])
        try ShortTool.check(namespace.ip, ["link", "set", "dev", outside, "mtu", "1300"])
        // (Output captured, unlike `namespace.start`.)
        let receiver = try PeerProcess(namespace.ip, ["netns", "exec", namespace.name, "/usr/bin/python3", "-u", "-c", """
            import socket
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("10.80.\(subnet).2", 4500))
            print("bound")
            for _ in range(6):
                print("got", len(s.recv(65536)))
            """])
        defer { receiver.stop() }
        try await receiver.waitForOutput(containing: "bound")

        let remote = try SocketAddress(ipAddress: "10.80.\(subnet).2", port: 4500)
        let local = try SocketAddress(ipAddress: "0.0.0.0", port: 0)
        let descriptor = try local.withSockAddr { address, length in
            try DatagramSocketOpen.bound(family: AF_INET, local: UnsafeRawBufferPointer(start: address, count: length), reuseAddress: false)
        }
        let host = WriterHost()
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(host) }
            }
            .withBoundSocket(descriptor).flatMap { channel in channel.connect(to: remote).map { channel } }.get()
        defer { channel.close(promise: nil) }

        // 3 × 600 bytes: one send the kernel segments. 3 × 1,400: refused (larger than a 1,300
        // packet), then sent one by one.
        let (afterSmall, afterLarge) = try await channel.eventLoop.submit { () throws -> (Bool, Bool) in
            guard let context = host.context else { throw ChannelError.ioOnClosedChannel }
            host.writer.writeDirectly(to: descriptor)
            #expect(host.writer.segments == System.supportsUDPSegmentationOffload)
            #expect(host.writer.write([Self.batch(count: 3, size: 600)], to: remote, through: context) == nil)
            let afterSmall = host.writer.segments
            #expect(host.writer.write([Self.batch(count: 3, size: 1_400)], to: remote, through: context) == nil)
            return (afterSmall, host.writer.segments)
        }.get()
        #expect(afterSmall, "a path that takes the segments keeps segmentation on")
        #expect(!afterLarge, "a refused segmentation turns it off")
        let sizes = try await receiver.waitForLines(startingWith: "got", count: 6)
        #expect(sizes == ["got 600", "got 600", "got 600", "got 1400", "got 1400", "got 1400"])
        // Closed before the test returns, so the handler is gone too (LeakSanitizer checks).
        try await channel.close()
    }
}
