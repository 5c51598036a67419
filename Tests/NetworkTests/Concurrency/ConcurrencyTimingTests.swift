import Foundation
import Network
import PeerSupport
import Testing

/// Bounds on how fast the 2025 API reacts, measured on the wall clock: they run alone, after
/// the parallel run, in `scripts/test.sh` (`NW_TEST_STRESS=1`), and in the serial sanitizer runs
/// (widened there): in a parallel run on two cores a task waits for a thread for longer than
/// the bound itself.
@Suite(
    "Concurrency.Timing",
    .enabled(
        if: ProcessInfo.processInfo.environment["NW_TEST_STRESS"] != nil || SanitizerSlowdown.factor > 1,
        "runs alone: scripts/test.sh runs it after the parallel run (NW_TEST_STRESS=1)"))
struct ConcurrencyTimingTests {
    @Test("a refused connection is waiting, and a task waiting in receive is cancelled within 100 ms: CancellationError, the connection cancelled")
    func cancelWhileWaiting() async throws {
        let port = try freePort()
        let connection = NetworkConnection(to: .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!)) { TCP() }
        let states = Recorder<NetworkChannel<TCP>.State>()
        connection.onStateUpdate { _, state in states.append(state) }
        let receiving = Task { try await connection.receive(atMost: 10) }
        try await states.wait("waiting") { $0.contains { if case .waiting = $0 { true } else { false } } }
        let cancelled = ContinuousClock.now
        receiving.cancel()
        await #expect(throws: CancellationError.self) { try await receiving.value }
        let elapsed = ContinuousClock.now - cancelled
        #expect(elapsed < .milliseconds(100 * SanitizerSlowdown.factor), "took \(elapsed)")
        try await states.wait("cancelled") { $0.last == .cancelled }
        #expect(connection.state == .cancelled)
    }
}
