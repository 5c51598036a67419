#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkCore
import NetworkSync
import Testing

/// Which write promise settles which datagram completion, and with what (no socket involved).
@Suite("Core.DatagramOutbox")
struct DatagramOutboxTests {
    /// Records what it was run with, under its index.
    private final class Probe: FlowDatagramCompletion {
        let index: Int
        let log: Log

        init(index: Int, log: Log) {
            self.index = index
            self.log = log
        }

        func run(_ error: FlowError?) { log.record(index, error) }
        func deliver(_ batch: FlowDatagramCompletions) { batch.runAll() }
    }

    private final class Log: Sendable {
        private let entries = Lock<[(Int, FlowError?)]>([])
        func record(_ index: Int, _ error: FlowError?) { entries.withLock { $0.append((index, error)) } }
        var indices: [Int] { entries.withLock { $0.map(\.0) } }
        var errors: [FlowError?] { entries.withLock { $0.map(\.1) } }
    }

    private func entry(_ size: Int?, _ index: Int, _ log: Log, error: FlowError? = nil) -> DatagramOutbox.Entry {
        DatagramOutbox.Entry(
            datagram: size.map { ByteBuffer(repeating: 1, count: $0) }, completion: Probe(index: index, log: log),
            error: error)
    }

    private func run(_ segment: DatagramOutbox.Segment, of entries: [DatagramOutbox.Entry], holderError: FlowError?) {
        FlowDatagramCompletions(entries, segment: segment, holderError: holderError).runAll()
    }

    @Test func oneSegmentEndsAtTheLastDatagramAndTakesWhatFollows() {
        let log = Log()
        let entries = [entry(10, 0, log), entry(nil, 1, log), entry(10, 2, log), entry(nil, 3, log)]
        let segments = DatagramOutbox.segments(of: entries) { _ in false }
        #expect(segments == [DatagramOutbox.Segment(range: 0..<4, holder: 2)])
    }

    @Test func aDatagramThatCanFailAloneEndsItsSegment() {
        let log = Log()
        let entries = [entry(10, 0, log), entry(100, 1, log), entry(10, 2, log), entry(100, 3, log), entry(nil, 4, log)]
        let segments = DatagramOutbox.segments(of: entries) { $0.readableBytes > 50 }
        #expect(
            segments == [
                DatagramOutbox.Segment(range: 0..<2, holder: 1),
                DatagramOutbox.Segment(range: 2..<5, holder: 3),
            ])
    }

    @Test func withoutDatagramsOneSegmentSettlesAtOnce() {
        let log = Log()
        #expect(DatagramOutbox.segments(of: []) { _ in false }.isEmpty)
        let entries = [entry(nil, 0, log), entry(nil, 1, log, error: .posix(ENOTCONN))]
        let segments = DatagramOutbox.segments(of: entries) { _ in false }
        #expect(segments == [DatagramOutbox.Segment(range: 0..<2, holder: nil)])
        run(segments[0], of: entries, holderError: nil)
        #expect(log.indices == [0, 1])
        #expect(log.errors == [nil, .posix(ENOTCONN)])
    }

    @Test func theHoldersErrorReachesEveryDatagramOfItsSegmentButEMSGSIZEOnlyItself() {
        let log = Log()
        let entries = [entry(10, 0, log), entry(nil, 1, log), entry(10, 2, log), entry(nil, 3, log, error: .posix(EPIPE))]
        let segment = DatagramOutbox.Segment(range: 0..<4, holder: 2)
        run(segment, of: entries, holderError: .posix(EHOSTUNREACH))
        #expect(log.indices == [0, 1, 2, 3])
        #expect(log.errors == [.posix(EHOSTUNREACH), nil, .posix(EHOSTUNREACH), .posix(EPIPE)])

        let tooLarge = Log()
        let others = [entry(10, 0, tooLarge), entry(70_000, 1, tooLarge)]
        run(DatagramOutbox.Segment(range: 0..<2, holder: 1), of: others, holderError: .posix(EMSGSIZE))
        #expect(tooLarge.errors == [nil, .posix(EMSGSIZE)])
    }

    @Test func sendsWithoutCompletionSettleNothing() {
        let entries = [DatagramOutbox.Entry(datagram: ByteBuffer(), completion: nil)]
        let segment = DatagramOutbox.Segment(range: 0..<1, holder: 0)
        #expect(FlowDatagramCompletions(entries, segment: segment, holderError: nil).isEmpty)
    }

    @Test func takeEmptiesTheOutboxInOrder() {
        let log = Log()
        var outbox = DatagramOutbox()
        #expect(outbox.isEmpty)
        outbox.reserve(2)
        outbox.append(entry(1, 0, log))
        outbox.append(entry(2, 1, log))
        let taken = outbox.take()
        #expect(taken.map { $0.datagram?.readableBytes } == [1, 2])
        #expect(outbox.isEmpty)
    }
}
