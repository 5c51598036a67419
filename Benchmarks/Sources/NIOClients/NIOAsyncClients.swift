// The scenarios on SwiftNIO's own async API (`NIOAsyncChannel`): one task per connection, each
// awaiting its write and iterating its inbound stream, as a NIO user of Swift concurrency writes
// it. Every driver talks to the C server (C/server.c).
import BenchSupport
import Dispatch
import NIOCore
import NIOPosix

func connectAsync(group: EventLoopGroup, host: String, port: Int) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
    try await ClientBootstrap(group: group)
        .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
        .connect(host: host, port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
}

/// N `NIOAsyncChannel`s to the echo server, each in its own task: write the request, read until
/// `size` bytes came back, again.
public final class NIOAsyncRoundTripClient: Sendable {
    let group: EventLoopGroup
    let host: String
    let port: Int
    let nports: Int
    let conns: Int
    let size: Int

    public init(group: EventLoopGroup, host: String, port: Int, nports: Int, conns: Int, size: Int) {
        (self.group, self.host, self.port, self.nports, self.conns, self.size) = (group, host, port, nports, conns, size)
    }

    public func start(_ control: RunControl) {
        let request = ByteBuffer(repeating: UInt8(ascii: "x"), count: size)
        for i in 0..<conns {
            Task {
                do {
                    let channel = try await connectAsync(group: group, host: host, port: port + i % nports)
                    try await channel.executeThenClose { inbound, outbound in
                        var iterator = inbound.makeAsyncIterator()
                        repeat {
                            try await outbound.write(request)
                            var have = 0
                            while have < size {
                                guard let chunk = try await iterator.next() else { throw ChannelError.eof }
                                have += chunk.readableBytes
                            }
                        } while control.completed()
                    }
                } catch {
                    control.error()
                }
                control.connectionStopped()
            }
        }
    }
}

/// One `NIOAsyncChannel` to the sink: `chunkSize`-byte writes, each awaited, until the duration is
/// over; then half-close and read the sink's 8-byte count.
public func nioAsyncBulk(group: EventLoopGroup, host: String, port: Int, chunkSize: Int, duration: Double) -> BulkResult {
    blockOn {
        let channel = try await ClientBootstrap(group: group)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    // (Finishing the outbound side then half-closes: the sink answers at EOF.)
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
        let chunk = ByteBuffer(repeating: UInt8(ascii: "b"), count: chunkSize)
        return try await channel.executeThenClose { inbound, outbound in
            let c0 = cpuTimes(), t0 = nowSeconds()
            let deadline = t0 + duration
            repeat {
                try await outbound.write(chunk)
            } while nowSeconds() < deadline
            outbound.finish()
            var count = ByteBuffer()
            for try await var part in inbound {
                count.writeBuffer(&part)
                if count.readableBytes >= 8 { break }
            }
            let t1 = nowSeconds(), c1 = cpuTimes()
            let bytes = count.readInteger(endianness: .little, as: UInt64.self) ?? 0
            return BulkResult(bytes: bytes, seconds: t1 - t0, cpuUser: c1.user - c0.user, cpuSys: c1.sys - c0.sys)
        }
    }
}

/// One `NIOAsyncChannel` of datagrams to the sink, each write awaited, and after every `group`
/// writes a hop through the channel's event loop: the writer hands its datagrams to the loop in
/// order, so once the hop returns they have been written. (Without it nothing holds the writer
/// back on loopback, where UDP never blocks: the task queued datagrams faster than the loop sent
/// them, the rate counted queued datagrams, and the backlog outlasted the run's 10 s stop.)
public final class NIOAsyncDatagramClient: Sendable {
    let group: EventLoopGroup
    let host: String
    let port: Int
    let size: Int
    let groupSize: Int

    public init(group: EventLoopGroup, host: String, port: Int, size: Int, batch: Int) {
        (self.group, self.host, self.port, self.size, self.groupSize) = (group, host, port, size, max(1, batch))
    }

    public func start(_ control: RunControl) {
        let payload = ByteBuffer(repeating: UInt8(ascii: "u"), count: size)
        Task {
            do {
                let remote = try SocketAddress(ipAddress: host, port: port)
                let channel = try await DatagramBootstrap(group: group)
                    .connect(to: remote) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try NIOAsyncChannel<AddressedEnvelope<ByteBuffer>, AddressedEnvelope<ByteBuffer>>(
                                wrappingChannelSynchronously: channel)
                        }
                    }
                let loop = channel.channel.eventLoop
                try await channel.executeThenClose { _, outbound in
                    var written = 0
                    repeat {
                        try await outbound.write(AddressedEnvelope(remoteAddress: remote, data: payload))
                        written += 1
                        if written % self.groupSize == 0 { try await loop.submit {}.get() }
                    } while control.completed()
                }
            } catch {
                control.error()
            }
            control.connectionStopped()
        }
    }
}
