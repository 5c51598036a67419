// The framed-messages scenario on plain SwiftNIO: the same type-and-length protocol as a
// ByteToMessageDecoder / MessageToByteEncoder pair, over TCP to the C echo server.
import BenchSupport
import NIOCore
import NIOPosix

/// One framed message: its type and its body.
struct TypeLengthMessage {
    var type: UInt32
    var body: ByteBuffer
}

/// 4-byte type, 4-byte length (big-endian), body.
struct TypeLengthDecoder: ByteToMessageDecoder {
    typealias InboundOut = TypeLengthMessage

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let type = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self),
            let length = buffer.getInteger(at: buffer.readerIndex + 4, as: UInt32.self),
            let body = buffer.getSlice(at: buffer.readerIndex + 8, length: Int(length))
        else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 8 + Int(length))
        context.fireChannelRead(Self.wrapInboundOut(TypeLengthMessage(type: type, body: body)))
        return .continue
    }
}

struct TypeLengthEncoder: MessageToByteEncoder {
    typealias OutboundIn = TypeLengthMessage

    func encode(data: TypeLengthMessage, out: inout ByteBuffer) throws {
        out.writeInteger(data.type)
        out.writeInteger(UInt32(data.body.readableBytes))
        out.writeImmutableBuffer(data.body)
    }
}

final class FramedHandler: ChannelInboundHandler {
    typealias InboundIn = TypeLengthMessage
    typealias OutboundOut = TypeLengthMessage

    private let message: TypeLengthMessage
    private let window: Int
    private var control: RunControl?
    private var needsFlush = false
    /// Flush once per read (true) or after every message.
    private let flushesPerRead: Bool

    init(size: Int, window: Int, flushesPerRead: Bool) {
        message = TypeLengthMessage(type: 7, body: ByteBuffer(repeating: UInt8(ascii: "f"), count: size))
        self.window = window
        self.flushesPerRead = flushesPerRead
    }

    func kick(_ control: RunControl, context: ChannelHandlerContext) {
        self.control = control
        for _ in 0..<window { context.write(wrapOutboundOut(message), promise: nil) }
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let received = unwrapInboundIn(data)
        guard let control else { return }
        guard received.type == 7, received.body.readableBytes == message.body.readableBytes else {
            control.error()
            return
        }
        if control.completed() {
            if flushesPerRead {
                context.write(wrapOutboundOut(message), promise: nil)
                needsFlush = true
            } else {
                context.writeAndFlush(wrapOutboundOut(message), promise: nil)
            }
        } else {
            self.control = nil
            control.connectionStopped()
        }
    }

    /// The answers to everything one read brought leave together (NIO's idiom for pipelined
    /// protocols: write in `channelRead`, flush in `channelReadComplete`).
    func channelReadComplete(context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        control?.error()
        context.close(promise: nil)
    }
}

/// One connection with `window` framed `size`-byte messages in flight; the answers to one read's
/// messages are flushed together (`flushesPerRead`, NIO's idiom) or one by one.
public final class NIOFramedClient: Sendable {
    public let channel: Channel

    public init(group: EventLoopGroup, host: String, port: Int, size: Int, window: Int, flushesPerRead: Bool) throws {
        channel = try ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(TypeLengthDecoder()))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(TypeLengthEncoder()))
                    try channel.pipeline.syncOperations.addHandler(FramedHandler(size: size, window: window, flushesPerRead: flushesPerRead))
                }
            }
            .connect(host: host, port: port).wait()
    }

    public func start(_ control: RunControl) {
        let channel = self.channel
        channel.eventLoop.execute {
            let handler = try! channel.pipeline.syncOperations.handler(type: FramedHandler.self)
            let context = try! channel.pipeline.syncOperations.context(handlerType: FramedHandler.self)
            handler.kick(control, context: context)
        }
    }

    public func close() {
        try? channel.close().wait()
    }
}
