import NIOCore
import NIOWebSocket

/// Writes a client's frames (RFC 6455 section 5.2), masked with `WebSocketMasking`, in place of
/// NIOWebSocket's `WebSocketFrameEncoder`, whose byte-by-byte masking held the event loop for
/// seconds with a 16 MiB message in a debug build. A server's frames are not masked and still go
/// through NIO's encoder. A small frame leaves as one buffer (header and masked payload); a
/// larger one as its header and its payload, masked in a copy (the application's buffer is never
/// changed).
final class WebSocketClientFrameEncoder: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = ByteBuffer

    /// Payloads up to this size are copied behind the header into one buffer.
    static let joinLimit = 4096

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = Self.unwrapOutboundIn(data)
        let key = frame.maskKey ?? .random()
        var payload = frame.data
        if var extensionData = frame.extensionData {
            // (Extension data comes first and is masked with the application data, as one.)
            extensionData.writeBuffer(&payload)
            payload = extensionData
        }
        let length = payload.readableBytes
        let joins = length <= Self.joinLimit
        var header = context.channel.allocator.buffer(capacity: 14 + (joins ? length : 0))
        Self.writeHeader(of: frame, length: length, key: key, to: &header)
        if joins {
            let start = header.readableBytes
            header.writeBuffer(&payload)
            WebSocketMasking.apply(key, to: &header, from: start)
            context.write(Self.wrapOutboundOut(header), promise: promise)
        } else {
            // Masking a shared buffer copies it first (copy on write).
            WebSocketMasking.apply(key, to: &payload)
            context.write(Self.wrapOutboundOut(header), promise: nil)
            context.write(Self.wrapOutboundOut(payload), promise: promise)
        }
    }

    /// FIN, the reserved bits and the opcode; the mask bit and the length (7 bits, or 126 and
    /// 16 bits, or 127 and 64 bits); the masking key.
    static func writeHeader(of frame: WebSocketFrame, length: Int, key: WebSocketMaskingKey, to buffer: inout ByteBuffer) {
        var first = UInt8(webSocketOpcode: frame.opcode)
        if frame.fin { first |= 0x80 }
        if frame.rsv1 { first |= 0x40 }
        if frame.rsv2 { first |= 0x20 }
        if frame.rsv3 { first |= 0x10 }
        buffer.writeInteger(first)
        if length < 126 {
            buffer.writeInteger(UInt8(0x80 | length))
        } else if length <= Int(UInt16.max) {
            buffer.writeInteger(UInt8(0x80 | 126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(0x80 | 127))
            buffer.writeInteger(UInt64(length))
        }
        buffer.writeBytes(key)
    }
}
