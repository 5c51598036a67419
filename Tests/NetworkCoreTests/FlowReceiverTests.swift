#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import NetworkCore
import NetworkSync
import Testing

/// A receive's completion gets the outcome in `Data` terms, unchanged otherwise.
@Suite("Core.FlowReceiver")
struct FlowReceiverTests {
    private func outcome(of received: ReceiveOutcome) -> DataReceiveOutcome? {
        let result = Lock<DataReceiveOutcome?>(nil)
        FlowReceiver { outcome in result.withLock { $0 = outcome } }.complete(received)
        return result.withLock { $0 }
    }

    @Test func bytesArriveAsDataWithTheirFlags() throws {
        let delivered = try #require(outcome(of: .data(ByteBuffer(bytes: [1, 2, 3]), isComplete: true, isFinal: false)))
        guard case .data(let data, let isComplete, let isFinal, _) = delivered else {
            Issue.record("expected data, got \(delivered)")
            return
        }
        #expect(data == Data([1, 2, 3]))
        #expect(isComplete && !isFinal)
    }

    @Test func endOfStreamWithoutBytesStaysNil() throws {
        let delivered = try #require(outcome(of: .data(nil, isComplete: true, isFinal: true)))
        guard case .data(let data, let isComplete, let isFinal, _) = delivered else {
            Issue.record("expected data, got \(delivered)")
            return
        }
        #expect(data == nil)
        #expect(isComplete && isFinal)
    }

    @Test func failureKeepsItsError() throws {
        let delivered = try #require(outcome(of: .failure(.posix(ECONNRESET))))
        guard case .failure(let error) = delivered else {
            Issue.record("expected a failure, got \(delivered)")
            return
        }
        #expect(error == .posix(ECONNRESET))
    }
}
