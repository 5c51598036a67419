import Foundation
import Network
import NetworkSync
import PeerSupport
import Testing

/// Many connections at once through one listener of the 2025 API. It keeps both cores busy for
/// half a minute (debug build), which would slow the timing tests of a parallel run: it runs on
/// its own, after the others, in `scripts/test.sh` (`NW_TEST_STRESS=1`), and in the serial
/// sanitizer runs, smaller there by the sanitizer's slowdown.
@Suite(
    "Concurrency.Stress",
    .enabled(
        if: ProcessInfo.processInfo.environment["NW_TEST_STRESS"] != nil || SanitizerSlowdown.factor > 1,
        "runs alone: scripts/test.sh runs it after the parallel run (NW_TEST_STRESS=1)"))
struct ConcurrencyStressTests {
    struct Move: Codable, Equatable, Sendable {
        let player: Int
        let turn: Int
        let reply: Bool
    }

    @Test("1,000 concurrent connections (fewer under sanitizers) to one listener each exchange 100 Coder messages: every reply arrives once, in order, to its own connection")
    func thousandConnections() async throws {
        let connections = 1000 / SanitizerSlowdown.factor
        let turns = 100
        let served = Lock(0)
        let serverErrors = Recorder<String>()
        let server = try await RunningListener(try NetworkListener { Coder(Move.self, using: .json) { TCP().noDelay(true) } }) { connection in
            do {
                for try await (move, _) in connection.messages {
                    try await connection.send(Move(player: move.player, turn: move.turn, reply: true))
                }
            } catch {
                serverErrors.append("\(error)")
            }
            served.withLock { $0 += 1 }
        }
        let started = ContinuousClock.now
        let replies = try await withThrowingTaskGroup(of: Int.self) { group in
            for player in 0..<connections {
                group.addTask {
                    var received = 0
                    do {
                        try await withNetworkConnection(to: server.endpoint, using: { Coder(Move.self, using: .json) { TCP().noDelay(true) } }) { connection in
                            // Sends run ahead of the replies: the first ten go out before any reply is read.
                            for turn in 0..<10 { try await connection.send(Move(player: player, turn: turn, reply: false)) }
                            for turn in 0..<turns {
                                let (reply, _) = try await connection.receive()
                                #expect(reply == Move(player: player, turn: turn, reply: true))
                                received += 1
                                if turn + 10 < turns { try await connection.send(Move(player: player, turn: turn + 10, reply: false)) }
                            }
                        }
                    } catch {
                        Issue.record("player \(player) after \(received) replies: \(error)")
                    }
                    return received
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = ContinuousClock.now - started
        #expect(serverErrors.values.isEmpty, "\(serverErrors.values.prefix(5))")
        #expect(replies == connections * turns)
        try await waitUntil("every server side ended", timeout: SanitizerSlowdown.seconds(10)) { served.withLock { $0 } == connections }
        print("concurrency stress: \(connections) connections x \(turns) Coder messages each way in \(elapsed)")
        _ = await server.stop()
    }
}
