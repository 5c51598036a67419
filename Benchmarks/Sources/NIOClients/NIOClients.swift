// The scenarios written against plain SwiftNIO (NIOPosix bootstraps, ChannelHandlers), the way a
// NIO user would write them. Every driver talks to the C server (C/server.c).
import BenchSupport
import Dispatch
import NIOCore
import NIOPosix

/// `threads == 0`: the process-wide `MultiThreadedEventLoopGroup.singleton` (one loop per core),
/// which is what a NIO application normally uses.
public func makeEventLoopGroup(threads: Int) -> MultiThreadedEventLoopGroup {
    threads > 0 ? MultiThreadedEventLoopGroup(numberOfThreads: threads) : .singleton
}

// MARK: - Round trips

final class RoundTripHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let request: ByteBuffer
    private let size: Int
    private var have = 0
    private var context: ChannelHandlerContext?
    private var control: RunControl?

    init(size: Int) {
        self.size = size
        self.request = ByteBuffer(repeating: UInt8(ascii: "x"), count: size)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func kick(_ control: RunControl) {
        self.control = control
        self.have = 0
        self.context!.writeAndFlush(self.wrapOutboundOut(self.request), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.have += self.unwrapInboundIn(data).readableBytes
        while self.have >= self.size {
            self.have -= self.size
            guard let control = self.control else { continue }
            if control.completed() {
                context.writeAndFlush(self.wrapOutboundOut(self.request), promise: nil)
            } else {
                self.control = nil
                control.connectionStopped()
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        self.control?.error()
        context.close(promise: nil)
    }
}

/// N connections to the echo server, each with one `size`-byte request in flight.
public final class NIORoundTripClient: Sendable {
    public let channels: [Channel]

    public init(group: EventLoopGroup, host: String, port: Int, nports: Int, conns: Int, size: Int) throws {
        let bootstrap = ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RoundTripHandler(size: size))
                }
            }
        var channels: [Channel] = []
        for i in 0..<conns {
            channels.append(try bootstrap.connect(host: host, port: port + i % nports).wait())
        }
        self.channels = channels
    }

    /// Sets every connection going; they stop when `control` says so.
    public func start(_ control: RunControl) {
        for channel in self.channels {
            channel.eventLoop.execute {
                try! channel.pipeline.syncOperations.handler(type: RoundTripHandler.self).kick(control)
            }
        }
    }

    /// Blocking: exactly-or-slightly-more-than `roundTrips` round trips over all connections.
    public func run(roundTrips: Int) {
        let control = RunControl(activeConnections: self.channels.count, budget: roundTrips)
        self.start(control)
        if !control.waitForAll(timeout: 60) { fail("round trips did not finish") }
    }

    public func close() {
        for channel in self.channels { try? channel.close().wait() }
    }
}

// MARK: - Bulk

final class BulkHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let chunk: ByteBuffer
    private let endMarker: Bool
    private var deadline = NIODeadline.distantFuture
    private var promise: EventLoopPromise<UInt64>?
    private var finished = false
    private var reply = ByteBuffer()
    private(set) var sent: UInt64 = 0

    /// `endMarker`: end the transfer with one 0x00 byte (the TLS sink's end of transfer) instead
    /// of a FIN.
    init(chunkSize: Int, endMarker: Bool = false) {
        self.chunk = ByteBuffer(repeating: UInt8(ascii: "b"), count: chunkSize)
        self.endMarker = endMarker
    }

    func start(context: ChannelHandlerContext, duration: TimeAmount, promise: EventLoopPromise<UInt64>) {
        self.deadline = .now() + duration
        self.promise = promise
        self.pump(context: context)
    }

    private func pump(context: ChannelHandlerContext) {
        while !self.finished && context.channel.isWritable {
            if NIODeadline.now() >= self.deadline {
                self.finished = true
                if self.endMarker {
                    context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(integer: UInt8(0))), promise: nil)
                } else {
                    context.close(mode: .output, promise: nil)  // FIN: the sink answers with its byte count
                }
                return
            }
            context.writeAndFlush(self.wrapOutboundOut(self.chunk), promise: nil)
            self.sent += UInt64(self.chunk.readableBytes)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if self.promise != nil { self.pump(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buf = self.unwrapInboundIn(data)
        self.reply.writeBuffer(&buf)
        if self.reply.readableBytes >= 8, let n = self.reply.readInteger(endianness: .little, as: UInt64.self) {
            self.promise?.succeed(n)
            self.promise = nil
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.promise?.fail(ChannelError.eof)
        self.promise = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        self.promise?.fail(error)
        self.promise = nil
        context.close(promise: nil)
    }
}

public struct BulkResult: Sendable {
    public var bytes: UInt64
    public var seconds: Double
    public var cpuUser: Double
    public var cpuSys: Double
}

/// One connection to the sink: `chunkSize`-byte writes for `duration` seconds, then FIN; the result
/// is what the sink counted, over the time until its count arrived.
public func nioBulk(group: EventLoopGroup, host: String, port: Int, chunkSize: Int, duration: Double) throws -> BulkResult {
    let channel = try ClientBootstrap(group: group)
        .channelOption(.tcpOption(.tcp_nodelay), value: 1)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(BulkHandler(chunkSize: chunkSize))
            }
        }
        .connect(host: host, port: port).wait()
    return try measureBulk(channel: channel, duration: duration)
}

/// Starts the `BulkHandler` in `channel`'s pipeline and waits for the sink's count.
func measureBulk(channel: Channel, duration: Double) throws -> BulkResult {
    let promise = channel.eventLoop.makePromise(of: UInt64.self)
    let c0 = cpuTimes(), t0 = nowSeconds()
    channel.eventLoop.execute {
        let ctx = try! channel.pipeline.syncOperations.context(handlerType: BulkHandler.self)
        let handler = try! channel.pipeline.syncOperations.handler(type: BulkHandler.self)
        handler.start(context: ctx, duration: .nanoseconds(Int64(duration * 1e9)), promise: promise)
    }
    let bytes = try promise.futureResult.wait()
    let t1 = nowSeconds(), c1 = cpuTimes()
    try? channel.close().wait()
    return BulkResult(bytes: bytes, seconds: t1 - t0, cpuUser: c1.user - c0.user, cpuSys: c1.sys - c0.sys)
}

// MARK: - UDP

final class DatagramPumpHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = ByteBuffer

    private let datagram: ByteBuffer
    private let group: Int
    private let batched: Bool
    private var context: ChannelHandlerContext?
    private var control: RunControl?
    private var waitingForWritable = false

    init(size: Int, group: Int, batched: Bool) {
        self.datagram = ByteBuffer(repeating: UInt8(ascii: "u"), count: size)
        self.group = group
        self.batched = batched
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func kick(_ control: RunControl) {
        self.control = control
        self.pump()
    }

    /// Writes one group of datagrams: `batched` = `write` × group then one `flush` (NIO sends them with
    /// one sendmmsg); otherwise `writeAndFlush` per datagram. The next group starts once the last
    /// write of this one has completed.
    private func pump() {
        guard let context = self.context, let control = self.control else { return }
        if control.shouldStop {
            self.control = nil
            control.connectionStopped()
            return
        }
        guard context.channel.isWritable else {
            self.waitingForWritable = true
            return
        }
        let out = self.wrapOutboundOut(self.datagram)
        for _ in 0..<(self.group - 1) {
            if self.batched { context.write(out, promise: nil) } else { context.writeAndFlush(out, promise: nil) }
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        if self.batched {
            context.write(out, promise: promise)
            context.flush()
        } else {
            context.writeAndFlush(out, promise: promise)
        }
        let group = self.group
        promise.futureResult.assumeIsolated().whenComplete { result in
            switch result {
            case .success: _ = control.completed(group)
            case .failure: control.error()
            }
            context.eventLoop.assumeIsolated().execute { self.pump() }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if self.waitingForWritable && context.channel.isWritable {
            self.waitingForWritable = false
            self.pump()
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        self.control?.error()  // e.g. ECONNREFUSED reported for an earlier datagram; keep going
    }
}

/// A connected datagram channel to the UDP sink.
public final class NIODatagramClient: Sendable {
    public let channel: Channel

    public init(group: EventLoopGroup, host: String, port: Int, size: Int, group groupSize: Int, batched: Bool) throws {
        self.channel = try DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        DatagramPumpHandler(size: size, group: groupSize, batched: batched)
                    )
                }
            }
            .connect(host: host, port: port).wait()
    }

    public func start(_ control: RunControl) {
        let channel = self.channel
        channel.eventLoop.execute {
            try! channel.pipeline.syncOperations.handler(type: DatagramPumpHandler.self).kick(control)
        }
    }

    /// Blocking: at least `datagrams` datagrams.
    public func run(datagrams: Int) {
        let control = RunControl(activeConnections: 1, budget: datagrams)
        self.start(control)
        if !control.waitForAll(timeout: 60) { fail("datagram pump did not stop") }
    }

    public func close() { try? self.channel.close().wait() }
}

// MARK: - Idle connections

final class IdleHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }
}

/// Opens `count` connections (at most 256 connects in flight), spread over `nports` echo ports.
public func nioOpenIdleConnections(group: EventLoopGroup, host: String, port: Int, nports: Int, count: Int) throws -> [Channel] {
    let bootstrap = ClientBootstrap(group: group)
        .channelOption(.tcpOption(.tcp_nodelay), value: 1)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(IdleHandler())
            }
        }
    let inflight = DispatchSemaphore(value: 256)
    let result = Locked<([Channel], Int)>(([], 0))
    let done = Latch(count: count)
    for i in 0..<count {
        inflight.wait()
        bootstrap.connect(host: host, port: port + i % nports).whenComplete { r in
            result.withLock { state in
                switch r {
                case .success(let ch): state.0.append(ch)
                case .failure: state.1 += 1
                }
            }
            inflight.signal()
            done.countDown()
        }
    }
    if !done.wait(timeout: 120) { fail("connects did not finish") }
    let (channels, failures) = result.value
    if failures > 0 { fail("\(failures) connects failed") }
    return channels
}
