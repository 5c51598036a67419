import NIOCore

/// Splits a DNS-over-TCP byte stream into messages (RFC 1035 section 4.2.2, RFC 7766): each
/// message is preceded by its 16-bit length. A value type with no I/O, so the exchange and the
/// fuzzer drive the same code. It holds at most one incomplete message (under 64 KiB) plus the
/// bytes that arrived with it.
package struct DNSStreamFramer: Sendable {
    private var buffer = ByteBuffer()

    /// An empty stream.
    package init() {}

    /// Bytes not yet handed out as messages.
    package var bufferedBytes: Int { buffer.readableBytes }

    /// Adds bytes read from the connection.
    package mutating func append(_ bytes: inout ByteBuffer) {
        buffer.writeBuffer(&bytes)
    }

    /// The next complete message, without its length prefix; nil until one has fully arrived.
    package mutating func nextMessage() -> [UInt8]? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt16.self),
            buffer.readableBytes >= Int(length) + 2
        else {
            // Keep only the incomplete message, not everything read before it.
            buffer.discardReadBytes()
            return nil
        }
        buffer.moveReaderIndex(forwardBy: 2)
        return buffer.readBytes(length: Int(length)) ?? []
    }
}
