import DequeModule
import NIOCore

/// What one QUIC stream has to send, from the application's send until the peer acknowledges
/// it. ngtcp2 copies nothing: it keeps pointers into the bytes it was given for
/// retransmission, so every chunk stays here, unmutated, until `acknowledged` passes its end.
struct QUICStreamOutbox {
    private var chunks = Deque<(offset: UInt64, bytes: ByteBuffer)>()
    /// The stream offset after the last byte queued.
    private(set) var queuedEnd: UInt64 = 0
    /// The stream offset up to which ngtcp2 has taken the bytes.
    private(set) var sentOffset: UInt64 = 0
    /// The stream offset up to which the peer acknowledged the bytes.
    private(set) var ackedOffset: UInt64 = 0
    private(set) var finQueued = false
    private(set) var finSent = false

    /// Bytes queued or in flight: what the stream holds of the application's memory.
    var heldBytes: UInt64 { queuedEnd - ackedOffset }

    /// Whether anything (bytes, or the end of the stream) waits to be handed to ngtcp2.
    var hasUnsent: Bool { sentOffset < queuedEnd || (finQueued && !finSent) }

    /// Queues `bytes` (possibly none) and, with `fin`, the end of the stream after them. Bytes
    /// after the end are refused (false).
    mutating func append(_ bytes: ByteBuffer, fin: Bool) -> Bool {
        guard !finQueued else { return bytes.readableBytes == 0 && fin }
        if bytes.readableBytes > 0 {
            chunks.append((queuedEnd, bytes))
            queuedEnd += UInt64(bytes.readableBytes)
        }
        if fin { finQueued = true }
        return true
    }

    /// Calls `body` with the unsent bytes as up to `limit` contiguous pieces (views into the
    /// chunks kept here, valid for as long as the chunks are) and whether the end of the stream
    /// follows them. (The pieces live on the stack: this runs once per packet.)
    func withUnsent<Result>(limit: Int, _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>, _ includesFin: Bool) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: max(1, limit)) { storage in
            var count = 0
            var covered = sentOffset
            for chunk in chunks where count < limit {
                let end = chunk.offset + UInt64(chunk.bytes.readableBytes)
                guard end > covered else { continue }
                let skip = Int(covered - chunk.offset)
                // The chunk is never written to and is kept until acknowledged, so its storage
                // outlives the pointer handed to ngtcp2 (the same assumption NIO's vector writes make).
                chunk.bytes.withUnsafeReadableBytes { whole in
                    storage.initializeElement(at: count, to: UnsafeRawBufferPointer(rebasing: whole[skip...]))
                }
                count += 1
                covered = end
            }
            return body(UnsafeBufferPointer(rebasing: storage[..<count]), finQueued && !finSent && covered == queuedEnd)
        }
    }

    /// ngtcp2 took `count` bytes from the front of the unsent ones, and the end of the stream
    /// if `fin`.
    mutating func taken(_ count: Int, fin: Bool) {
        sentOffset = min(queuedEnd, sentOffset + UInt64(max(0, count)))
        if fin && sentOffset == queuedEnd && finQueued { finSent = true }
    }

    /// The peer acknowledged `length` bytes at `offset`: chunks wholly before the acknowledged
    /// prefix are let go.
    mutating func acknowledged(offset: UInt64, length: UInt64) {
        // ngtcp2 reports the acknowledged prefix as it grows, in order.
        ackedOffset = max(ackedOffset, min(sentOffset, offset + length))
        while let first = chunks.first, first.offset + UInt64(first.bytes.readableBytes) <= ackedOffset {
            chunks.removeFirst()
        }
    }

    /// ngtcp2 forgot what it took (the server refused the 0-RTT packets that carried it, and
    /// acknowledged none of them): everything not acknowledged is unsent again, for a new stream
    /// whose offsets start where this one's did.
    mutating func rewind() {
        sentOffset = ackedOffset
        finSent = false
    }

    /// The stream was reset or closed: nothing more will be sent or retransmitted.
    mutating func discard() {
        chunks.removeAll()
        ackedOffset = queuedEnd
        sentOffset = queuedEnd
        finSent = finQueued
    }
}
