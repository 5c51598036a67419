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
                    let message = TypeLengthMessage(type: 7, body: ByteBuffer(repeating: UInt8(ascii: "f"), count: size))
                    try channel.pipeline.syncOperations.addHandler(
                        EchoWindowHandler(window: window, flushesPerRead: flushesPerRead, make: { message }) { echo in
                            echo.type == 7 && echo.body.readableBytes == size
                        })
                }
            }
            .connect(host: host, port: port).wait()
    }

    public func start(_ control: RunControl) {
        EchoWindowHandler<TypeLengthMessage>.kick(in: channel, control)
    }

    public func close() {
        try? channel.close().wait()
    }
}
