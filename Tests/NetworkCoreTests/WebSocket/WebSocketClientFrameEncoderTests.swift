import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import NetworkCore

/// Our client frame encoder against NIOWebSocket's decoder, and the word-wise masking against
/// the byte-wise definition.
@Suite("Core.WebSocketClientFrameEncoder")
struct WebSocketClientFrameEncoderTests {
    @Test("masking a word at a time equals RFC 6455's byte by byte, at any length and offset")
    func maskingMatchesTheDefinition() throws {
        let key = try #require(WebSocketMaskingKey([0x12, 0x34, 0xAB, 0xCD]))
        for length in [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 100, 1001] {
            for offset in [0, 1, 5] where offset <= length {
                let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                var buffer = ByteBuffer(bytes: bytes)
                WebSocketMasking.apply(key, to: &buffer, from: offset)
                let expected = bytes.enumerated().map { index, byte in
                    index < offset ? byte : byte ^ key[(index - offset) % 4]
                }
                #expect(Array(buffer.readableBytesView) == expected, "length \(length), offset \(offset)")
                WebSocketMasking.apply(key, to: &buffer, from: offset)
                #expect(Array(buffer.readableBytesView) == bytes, "its own inverse")
            }
        }
    }

    @Test("frames of every length class decode with NIO's decoder to what was sent, masked, and the sender's buffer is untouched",
          arguments: [0, 5, 125, 126, 4096, 4097, 65_535, 65_536, 70_000])
    func roundTripThroughNIOsDecoder(length: Int) throws {
        let encoder = EmbeddedChannel(handler: WebSocketClientFrameEncoder())
        let decoder = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 20)))
        defer {
            _ = try? encoder.finish()
            _ = try? decoder.finish()
        }
        let payload = ByteBuffer(bytes: (0..<length).map { UInt8(truncatingIfNeeded: $0) })
        for (opcode, fin) in [(WebSocketOpcode.binary, true), (.text, false), (.continuation, true), (.ping, true)] {
            guard opcode != .ping || length <= 125 else { continue }
            let sent = WebSocketFrame(fin: fin, opcode: opcode, maskKey: .random(), data: payload)
            try encoder.writeOutbound(sent)
            while let bytes = try encoder.readOutbound(as: ByteBuffer.self) { try decoder.writeInbound(bytes) }
            let received = try #require(try decoder.readInbound(as: WebSocketFrame.self))
            #expect(received.fin == fin && received.opcode == opcode)
            #expect(received.maskKey == sent.maskKey, "masked with the frame's key")
            #expect(received.unmaskedData == payload)
            #expect(!received.rsv1 && !received.rsv2 && !received.rsv3)
            #expect(sent.data == payload, "the application's buffer is not masked in place")
        }
    }

    @Test("small frames written before a flush leave as one buffer at the flush, in order with a large frame between them; their promises complete once written; a close writes what waits")
    func smallFramesAreGatheredUntilTheFlush() throws {
        let channel = EmbeddedChannel(handler: WebSocketClientFrameEncoder())
        let decoder = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 20)))
        defer {
            _ = try? channel.finish()
            _ = try? decoder.finish()
        }
        let small = (0..<3).map { ByteBuffer(bytes: Array(repeating: UInt8($0), count: 10 + $0)) }
        let large = ByteBuffer(bytes: (0..<5000).map { UInt8(truncatingIfNeeded: $0) })
        var promises: [EventLoopFuture<Void>] = []
        for payload in small[0..<2] {
            let promise = channel.eventLoop.makePromise(of: Void.self)
            channel.write(WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: payload), promise: promise)
            promises.append(promise.futureResult)
        }
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "nothing leaves before the flush or a large frame")
        channel.write(WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: large), promise: nil)
        channel.write(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: small[2]), promise: nil)
        channel.flush()
        var writes: [ByteBuffer] = []
        while let bytes = try channel.readOutbound(as: ByteBuffer.self) { writes.append(bytes) }
        #expect(writes.count == 4, "the two small frames together, the large one's header and payload, the last small one")
        for bytes in writes { try decoder.writeInbound(bytes) }
        var received: [WebSocketFrame] = []
        while let frame = try decoder.readInbound(as: WebSocketFrame.self) { received.append(frame) }
        #expect(received.map(\.unmaskedData) == [small[0], small[1], large, small[2]])
        #expect(received.map(\.opcode) == [.binary, .binary, .binary, .text])
        for future in promises { try future.wait() }

        // A close hands a frame that waits to the handler below first (which then fails or
        // writes it as it does any write nobody flushed): nothing stays behind in the encoder.
        let below = WriteRecorder()
        let closing = EmbeddedChannel(handlers: [below, WebSocketClientFrameEncoder()])
        closing.write(WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: ByteBuffer()), promise: nil)
        #expect(below.writes.isEmpty)
        // (`finish` closes the channel through the pipeline and lets go of what it holds.)
        _ = try closing.finish()
        #expect(below.writes.count == 1, "the close frame went down before the close")
    }
}

/// Counts the writes that reach it, flushed or not.
private final class WriteRecorder: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = ByteBuffer
    private(set) var writes: [ByteBuffer] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        writes.append(unwrapOutboundIn(data))
        context.write(data, promise: promise)
    }
}
