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
}
