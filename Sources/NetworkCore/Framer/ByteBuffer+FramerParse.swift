import NIOCore

extension ByteBuffer {
    /// The framer API's parse step over these readable bytes (`parseInput` and `parseOutput`
    /// alike): shows `body` up to `maximum` of them (nil when there are none) and consumes as
    /// many as it returns, clamped to what it saw. `isComplete` reaches `body` only when it sees
    /// every byte left.
    ///
    /// The bytes are shown in place, without the copy-on-write that mutable access would make.
    /// Input's storage is shared with the messages delivered from it before (slices of bytes
    /// already consumed, never of these) and with NIO's receive buffer pool (which reuses a
    /// buffer only once nothing else holds it); an outgoing message's, with the buffer
    /// `FramerHandler` keeps to copy the next message sent from the loop into (cleared before
    /// use, and replaced by copy-on-write while anything else holds it). So a framer that writes
    /// into what it is shown changes only bytes no one else reads, as it would in a copy. With
    /// the copy, every message parsed after another was delivered from the same read copied the
    /// whole rest of the read.
    mutating func showToFramer(upTo maximum: Int, isComplete: Bool, _ body: (UnsafeMutableRawBufferPointer?, Bool) -> Int) {
        let available = readableBytes
        let shown = Swift.min(available, Swift.max(maximum, 0))
        let consumed: Int
        if shown == 0 {
            consumed = body(nil, isComplete)
        } else {
            consumed = withUnsafeReadableBytes { all in
                body(UnsafeMutableRawBufferPointer(mutating: UnsafeRawBufferPointer(rebasing: all.prefix(shown))), isComplete && shown == available)
            }
        }
        moveReaderIndex(forwardBy: Swift.min(Swift.max(consumed, 0), shown))
    }
}
