#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkCore
import Testing

/// The data-path rules of ARCHITECTURE.md, on the value type that enforces them.
@Suite("Core.ReceiveQueue")
struct ReceiveQueueTests {
    private func bytes(_ count: Int, from start: UInt8 = 0) -> ByteBuffer {
        ByteBuffer(bytes: (0..<count).map { start &+ UInt8(truncatingIfNeeded: $0) })
    }

    private func payload(_ outcome: ReceiveOutcome) -> [UInt8]? {
        if case .data(let buffer, _, _, _) = outcome { return buffer.map { Array($0.readableBytesView) } }
        return nil
    }

    @Test func streamMinimumIsHonouredAcrossOneByteWrites() {
        var q = ReceiveQueue<Int>(mode: .stream)
        #expect(q.enqueue(minimum: 10, maximum: 10, token: 1).isEmpty)
        for i in 0..<9 {
            #expect(q.append(bytes(1, from: UInt8(i))).isEmpty, "no completion before 10 bytes")
        }
        let done = q.append(bytes(1, from: 9))
        #expect(done.count == 1)
        #expect(payload(done[0].1) == Array(0..<10))
        if case .data(_, let isComplete, _, _) = done[0].1 { #expect(!isComplete) }
    }

    @Test func theEndOfStreamCountsAsDeliveredOnlyWithTheReceiveThatReachesIt() {
        var q = ReceiveQueue<Int>(mode: .stream)
        _ = q.append(bytes(5))
        _ = q.receivedEndOfStream()
        #expect(!q.endOfStreamDelivered, "nobody has read up to the end yet")
        let first = q.enqueue(minimum: 1, maximum: 3, token: 1)
        if case .data(_, let isComplete, let isFinal, _) = first[0].1 { #expect(!isComplete && !isFinal) }
        #expect(!q.endOfStreamDelivered)
        let last = q.enqueue(minimum: 1, maximum: 10, token: 2)
        if case .data(_, let isComplete, let isFinal, _) = last[0].1 { #expect(isComplete && isFinal) }
        #expect(q.endOfStreamDelivered)

        var empty = ReceiveQueue<Int>(mode: .stream)
        _ = empty.receivedEndOfStream()
        #expect(!empty.endOfStreamDelivered)
        _ = empty.enqueue(minimum: 1, maximum: 10, token: 1)
        #expect(empty.endOfStreamDelivered, "a receive at the end with nothing left delivers it too")
    }

    @Test func streamMaximumCapsEachReceive() {
        var q = ReceiveQueue<Int>(mode: .stream)
        _ = q.append(bytes(25))
        let a = q.enqueue(minimum: 1, maximum: 10, token: 1)
        let b = q.enqueue(minimum: 1, maximum: 10, token: 2)
        let c = q.enqueue(minimum: 1, maximum: 10, token: 3)
        #expect(payload(a[0].1)?.count == 10)
        #expect(payload(b[0].1)?.count == 10)
        #expect(payload(c[0].1) == Array(20..<25))
        #expect(q.bufferedBytes == 0)
    }

    @Test func endOfStreamCompletesShortReceiveWithIsComplete() {
        var q = ReceiveQueue<Int>(mode: .stream)
        _ = q.enqueue(minimum: 10, maximum: 100, token: 1)
        #expect(q.append(bytes(3)).isEmpty)
        let done = q.receivedEndOfStream()
        #expect(done.count == 1)
        #expect(done[0].1 == .data(bytes(3), isComplete: true, isFinal: true))
        // After the end, every receive completes at once, empty and complete.
        let after = q.enqueue(minimum: 1, maximum: 10, token: 2)
        #expect(after.count == 1)
        #expect(after[0].1 == .data(nil, isComplete: true, isFinal: true))
    }

    @Test func lastChunkBeforeKnownEndIsComplete() {
        var q = ReceiveQueue<Int>(mode: .stream)
        _ = q.append(bytes(4))
        _ = q.receivedEndOfStream()
        let first = q.enqueue(minimum: 1, maximum: 2, token: 1)
        let second = q.enqueue(minimum: 1, maximum: 2, token: 2)
        #expect(first[0].1 == .data(bytes(2), isComplete: false, isFinal: false))
        #expect(second[0].1 == .data(bytes(2, from: 2), isComplete: true, isFinal: true))
    }

    @Test func receivesCompleteInOrder() {
        var q = ReceiveQueue<Int>(mode: .stream)
        for token in 1...5 { _ = q.enqueue(minimum: 2, maximum: 2, token: token) }
        let done = q.append(bytes(10))
        #expect(done.map(\.0) == [1, 2, 3, 4, 5])
    }

    @Test func invalidBoundsFailWithEINVAL() {
        var q = ReceiveQueue<Int>(mode: .stream)
        for (minimum, maximum) in [(5, 4), (0, 0), (-1, 10), (1, -5)] {
            let done = q.enqueue(minimum: minimum, maximum: maximum, token: 9)
            #expect(done.count == 1)
            #expect(done[0].1 == .failure(.posix(EINVAL)))
        }
        #expect(q.pendingReceiveCount == 0)
    }

    @Test func datagramIsOneWholeMessagePerReceive() {
        var q = ReceiveQueue<Int>(mode: .datagram)
        _ = q.append(bytes(3))
        _ = q.append(bytes(100))
        _ = q.append(ByteBuffer())
        let a = q.enqueue(minimum: 1, maximum: 65536, token: 1)
        let b = q.enqueue(minimum: 50, maximum: 65536, token: 2)
        let c = q.enqueue(minimum: 1, maximum: 65536, token: 3)
        #expect(a[0].1 == .data(bytes(3), isComplete: true, isFinal: false))
        #expect(payload(b[0].1)?.count == 100)
        #expect(c[0].1 == .data(ByteBuffer(), isComplete: true, isFinal: false), "empty datagrams are delivered")
    }

    @Test func oversizedDatagramArrivesInPieces() {
        var q = ReceiveQueue<Int>(mode: .datagram)
        _ = q.append(bytes(25))
        let a = q.enqueue(minimum: 1, maximum: 10, token: 1)
        let b = q.enqueue(minimum: 1, maximum: 10, token: 2)
        let c = q.enqueue(minimum: 1, maximum: 10, token: 3)
        #expect(a[0].1 == .data(bytes(10), isComplete: false, isFinal: false))
        #expect(b[0].1 == .data(bytes(10, from: 10), isComplete: false, isFinal: false))
        #expect(c[0].1 == .data(bytes(5, from: 20), isComplete: true, isFinal: false))
        #expect(q.bufferedBytes == 0)
    }

    @Test func errorAfterDataDeliversDataFirst() {
        var q = ReceiveQueue<Int>(mode: .stream)
        _ = q.append(bytes(5))
        _ = q.fail(.posix(ECONNRESET))
        let a = q.enqueue(minimum: 1, maximum: 100, token: 1)
        let b = q.enqueue(minimum: 1, maximum: 100, token: 2)
        #expect(payload(a[0].1)?.count == 5)
        #expect(b[0].1 == .failure(.posix(ECONNRESET)))
    }

    @Test func failAllCompletesEverythingAndDropsData() {
        var q = ReceiveQueue<Int>(mode: .stream)
        _ = q.enqueue(minimum: 100, maximum: 100, token: 1)
        _ = q.enqueue(minimum: 100, maximum: 100, token: 2)
        _ = q.append(bytes(10))
        let done = q.failAll(.posix(ECANCELED))
        #expect(done.map(\.0) == [1, 2])
        #expect(done.allSatisfy { $0.1 == .failure(.posix(ECANCELED)) })
        #expect(q.bufferedBytes == 0)
    }

    @Test func backpressureStopsReadingAtHighWaterUnlessAReceiveNeedsMore() {
        var q = ReceiveQueue<Int>(mode: .stream)
        #expect(q.wantsRead(highWater: 100))
        _ = q.append(bytes(150))
        #expect(!q.wantsRead(highWater: 100), "over the mark with nobody asking: stop reading")
        _ = q.enqueue(minimum: 200, maximum: 300, token: 1)
        #expect(q.wantsRead(highWater: 100), "a receive that needs more keeps reading")
        _ = q.receivedEndOfStream()
        #expect(!q.wantsRead(highWater: 100))
    }
}
