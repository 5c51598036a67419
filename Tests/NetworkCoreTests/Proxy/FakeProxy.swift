import NIOCore
import NIOPosix
import PeerSupport
import Synchronization

/// A hostile or broken "proxy" written in the test, on a real loopback socket: it waits for the
/// client's first bytes, then answers as told. It records what it received and how much it
/// managed to send.
final class FakeProxy: Sendable {
    enum Behaviour: Sendable {
        /// Send these bytes once and keep the connection open.
        case respond([UInt8])
        /// Send this chunk over and over, as fast as the client takes it, up to `limit` bytes.
        case flood([UInt8], limit: Int)
        /// Say nothing.
        case silent
        /// Close at once.
        case close
    }

    let port: Int
    /// Everything the client sent.
    let received: Recorder<[UInt8]>
    private let counter: SentCounter
    private let server: Channel

    /// Bytes the kernel took from the fake proxy so far.
    var sent: Int { counter.bytes.load(ordering: .relaxed) }

    private init(port: Int, received: Recorder<[UInt8]>, counter: SentCounter, server: Channel) {
        self.port = port
        self.received = received
        self.counter = counter
        self.server = server
    }

    static func start(_ behaviour: Behaviour) async throws -> FakeProxy {
        let received = Recorder<[UInt8]>()
        let counter = SentCounter()
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        FakeProxyHandler(behaviour: behaviour, received: received, counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return FakeProxy(port: server.localAddress?.port ?? 0, received: received, counter: counter, server: server)
    }

    func stop() async {
        try? await server.close()
    }

    /// Shared by the proxy and its connections' handlers.
    final class SentCounter: Sendable {
        let bytes = Atomic<Int>(0)
        func add(_ count: Int) { bytes.add(count, ordering: .relaxed) }
    }
}

private final class FakeProxyHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let behaviour: FakeProxy.Behaviour
    private let received: Recorder<[UInt8]>
    private let counter: FakeProxy.SentCounter
    private var answered = false
    private var flooded = 0

    init(behaviour: FakeProxy.Behaviour, received: Recorder<[UInt8]>, counter: FakeProxy.SentCounter) {
        self.behaviour = behaviour
        self.received = received
        self.counter = counter
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received.append(Array(Self.unwrapInboundIn(data).readableBytesView))
        guard !answered else { return }
        answered = true
        switch behaviour {
        case .respond(let bytes):
            counter.add(bytes.count)
            context.writeAndFlush(Self.wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
        case .flood(let chunk, let limit):
            pump(context: context, chunk: ByteBuffer(bytes: chunk), limit: limit)
        case .silent:
            break
        case .close:
            context.close(promise: nil)
        }
    }

    /// Writes the chunk again each time the previous one was taken by the kernel, so the amount
    /// in flight is what the client's receive window allows, not what this side can queue.
    private func pump(context: ChannelHandlerContext, chunk: ByteBuffer, limit: Int) {
        guard flooded < limit, context.channel.isActive else { return }
        flooded += chunk.readableBytes
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(Self.wrapOutboundOut(chunk)).assumeIsolated().whenSuccess {
            self.counter.add(chunk.readableBytes)
            let context = loopBound.value
            context.eventLoop.assumeIsolated().execute { self.pump(context: context, chunk: chunk, limit: limit) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
