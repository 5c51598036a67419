import Foundation
import NetworkSync
import PeerSupport
import Testing

/// Sends with `send` until no send has returned for 300 ms (the peer reads nothing, so the
/// socket buffers and the send budget fill), then cancels the sending task: it must end with
/// `CancellationError` well before the cancelled connection's 10 s close linger.
func expectCancelledWaitEndsAtOnce(_ send: @escaping @Sendable () async throws -> Void) async throws {
    let sent = Lock(0)
    let sending = Task {
        while true {
            try await send()
            sent.withLock { $0 += 1 }
        }
    }
    // (The first send waits for the connection, which a loaded run may take a while to make.)
    try await waitUntil("a first send returned", timeout: 10) { sent.withLock { $0 } > 0 }
    _ = await settledCount { sent.withLock { $0 } }
    let cancelled = ContinuousClock.now
    sending.cancel()
    await #expect(throws: CancellationError.self) { try await sending.value }
    // Well under a second alone; the bound leaves room for a loaded parallel run.
    let elapsed = ContinuousClock.now - cancelled
    #expect(elapsed < .seconds(5), "took \(elapsed)")
}
