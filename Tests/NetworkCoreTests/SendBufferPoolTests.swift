import NIOCore
import NetworkCore
import Testing

/// Which written send buffers a flow keeps for its next sends, on the value type.
@Suite("Core.SendBufferPool")
struct SendBufferPoolTests {
    private func buffer(_ capacity: Int) -> ByteBuffer {
        ByteBufferAllocator().buffer(capacity: capacity)
    }

    @Test func keepsBuffersUpToTheLimitAndHandsThemOutAgain() {
        var pool = SendBufferPool()
        let none = pool.take()
        #expect(none == nil)
        let first = pool.give(buffer(64 * 1024), limit: 128 * 1024)
        #expect(first, "the first buffer asks for a check")
        let second = pool.give(buffer(64 * 1024), limit: 128 * 1024)
        #expect(!second, "one check at a time")
        _ = pool.give(buffer(64 * 1024), limit: 128 * 1024)
        #expect(pool.count == 2, "a third would pass the limit")
        let taken = pool.take()
        #expect(taken?.capacity == 64 * 1024)
        #expect(pool.count == 1)
    }

    @Test func doesNotKeepHugeBuffers() {
        var pool = SendBufferPool()
        let kept = pool.give(buffer(SendBufferPool.largestKept + 1), limit: .max)
        #expect(!kept)
        #expect(pool.count == 0)
    }

    @Test func aCheckEmptiesAPoolNoSendUsedSinceThePreviousOne() {
        var pool = SendBufferPool()
        _ = pool.give(buffer(1024), limit: .max)
        // Given counts as use: the first check keeps what the flow just wrote.
        let again = pool.check()
        #expect(again, "still holding: check again later")
        #expect(pool.count == 1)
        let more = pool.check()
        #expect(!more, "unused since the last check: emptied, no further check")
        #expect(pool.count == 0)
        let scheduled = pool.give(buffer(1024), limit: .max)
        #expect(scheduled, "a new buffer schedules a new check")
    }

    @Test func aPoolInUseSurvivesChecks() {
        var pool = SendBufferPool()
        _ = pool.give(buffer(1024), limit: .max)
        for _ in 0..<3 {
            let again = pool.check()
            #expect(again)
            let reused = pool.take()
            #expect(reused != nil)
            if let reused { _ = pool.give(reused, limit: .max) }
        }
        #expect(pool.count == 1)
        #if DEBUG
        #expect(pool.reuses == 3)
        #endif
    }
}
