import Dispatch
import Foundation
import NetworkCore
import PeerSupport
import Testing

@testable import Network

/// A channel released at an awkward moment still closes its connection and frees its flow.
@Suite("Concurrency.ChannelCoreRelease")
struct ChannelCoreReleaseTests {
    /// The regression behind a rare LeakSanitizer report: sends of the 2025 API that the flow took
    /// at once were counted as handlers still to come (their tickets were never run), so when a
    /// state handler was running as the channel was released, the cancel queued by the release
    /// waited for those handlers, never woke the loop, and kept the flow alive for ever.
    @Test("a channel released while a state handler runs, after sends the flow took at once, still cancels and frees its flow")
    func releasedWhileStateHandlerRuns() async throws {
        let server = try await RunningListener(try NetworkListener { TCP() }) { connection in
            while true {
                let (_, metadata) = try await connection.receive(atMost: 1024)
                if metadata.endOfStream { return }
            }
        }
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let freed = Weak<Flow>()
        var core: ChannelCore? = ChannelCore(connection: NWConnection(to: server.endpoint, using: .tcp))
        core?.observeStates { state in
            guard state == .ready else { return }
            // Holds the connection's queue inside the state handler (`Flow.runCallback`).
            entered.signal()
            _ = release.wait(timeout: .now() + 10)
        }
        freed.object = core?.flow
        core?.startIfNeeded()
        let handlerRuns = try await offload { entered.wait(timeout: .now() + 5) == .success }
        try #require(handlerRuns, "the ready handler runs")
        // The budget opens as `ready` is handed on, just before the handler above runs.
        await pause(milliseconds: 50)
        for _ in 0..<3 { try await core?.sendStream(Data("hi".utf8), closesWrite: false) }
        core = nil
        release.signal()
        try await waitUntil("the released channel's flow freed", timeout: 5) { freed.object == nil }
        _ = await server.stop()
    }
}
