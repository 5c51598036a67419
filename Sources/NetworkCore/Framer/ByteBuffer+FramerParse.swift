import NIOCore

extension ByteBuffer {
    /// The framer API's parse step over these readable bytes (`parseInput` and `parseOutput`
    /// alike): shows `body` up to `maximum` of them (nil when there are none) and consumes as
    /// many as it returns, clamped to what it saw. `isComplete` reaches `body` only when it sees
    /// every byte left.
    mutating func showToFramer(upTo maximum: Int, isComplete: Bool, _ body: (UnsafeMutableRawBufferPointer?, Bool) -> Int) {
        let available = readableBytes
        let shown = Swift.min(available, Swift.max(maximum, 0))
        let consumed: Int
        if shown == 0 {
            consumed = body(nil, isComplete)
        } else {
            consumed = withUnsafeMutableReadableBytes { all in
                body(UnsafeMutableRawBufferPointer(rebasing: all.prefix(shown)), isComplete && shown == available)
            }
        }
        moveReaderIndex(forwardBy: Swift.min(Swift.max(consumed, 0), shown))
    }
}
