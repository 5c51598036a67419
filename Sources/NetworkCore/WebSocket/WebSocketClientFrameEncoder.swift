#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOWebSocket

/// Writes a client's frames (RFC 6455 section 5.2), masked with `WebSocketMasking`, in place of
/// NIOWebSocket's `WebSocketFrameEncoder`, whose byte-by-byte masking held the event loop for
/// seconds with a 16 MiB message in a debug build. A server's frames are not masked and still go
/// through NIO's encoder. Small frames are gathered, header and masked payload, into one buffer
/// that is written at the flush (one buffer and one write for a flush's frames, not one each:
/// small messages are where per-frame costs show); a larger frame leaves as its header and its
/// payload, masked in a copy (the application's buffer is never changed), after what was
/// gathered before it.
final class WebSocketClientFrameEncoder: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = ByteBuffer

    /// Payloads up to this size are copied behind their header into the gathered buffer.
    static let joinLimit = 4096
    /// A gathered buffer this large is written without waiting for the flush.
    static let gatherLimit = 64 * 1024

    /// Small frames since the last flush, not yet written.
    private var gathered: ByteBuffer?
    /// The promises of the frames in `gathered`.
    private var gatheredPromise = GatheredWritePromise()

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
        guard length > Self.joinLimit else {
            // (Taken out of the property while it grows, so that it is not copied on write.)
            var buffer = gathered ?? context.channel.allocator.buffer(capacity: 1024)
            gathered = nil
            Self.writeHeader(of: frame, length: length, key: key, to: &buffer)
            let start = buffer.readableBytes
            buffer.writeBuffer(&payload)
            WebSocketMasking.apply(key, to: &buffer, from: start)
            gathered = buffer
            gatheredPromise.add(promise)
            if buffer.readableBytes >= Self.gatherLimit { writeGathered(context: context) }
            return
        }
        writeGathered(context: context)
        var header = context.channel.allocator.buffer(capacity: 14)
        Self.writeHeader(of: frame, length: length, key: key, to: &header)
        // Masking a shared buffer copies it first (copy on write).
        WebSocketMasking.apply(key, to: &payload)
        context.write(Self.wrapOutboundOut(header), promise: nil)
        context.write(Self.wrapOutboundOut(payload), promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        writeGathered(context: context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // (A close frame written just before goes out first.)
        writeGathered(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        gathered = nil
        gatheredPromise.take()?.fail(FlowError.posix(ECANCELED))
    }

    /// Hands what was gathered to the handler below (the caller flushes).
    private func writeGathered(context: ChannelHandlerContext) {
        guard let buffer = gathered else { return }
        gathered = nil
        context.write(Self.wrapOutboundOut(buffer), promise: gatheredPromise.take())
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
