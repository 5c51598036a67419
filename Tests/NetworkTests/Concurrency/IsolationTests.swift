import Dispatch
import Foundation
import Network
import PeerSupport
import Synchronization
import Testing

/// Observers marked `@isolated(any)` run in the isolation of the code that wrote them: an
/// actor's handler touches the actor's state synchronously, a main-actor handler runs on the
/// main actor. (That these compile at all, in Swift 6 mode, is half the test.)
@Suite("Concurrency.Isolation")
struct IsolationTests {
    actor Scoreboard {
        var states: [NetworkChannel<TCP>.State] = []

        func watch(_ connection: NetworkConnection<TCP>) {
            connection.onStateUpdate { [self] _, state in
                // Synchronous access to the actor's state: the handler runs on the actor.
                self.assertIsolated()
                self.states.append(state)
            }
        }
    }

    @MainActor final class Screen {
        var lines: [String] = []
        var listenerStates: [NetworkListener<TCP>.State] = []

        /// (A listener's handlers are `@Sendable`, as Apple declares them: their isolation is
        /// written out.)
        func watch(_ listener: NetworkListener<TCP>) {
            listener.onStateUpdate { @MainActor _, state in
                MainActor.assertIsolated()
                self.listenerStates.append(state)
            }
        }

        func watch(_ connection: NetworkConnection<TCP>) {
            connection.onStateUpdate { _, state in
                MainActor.assertIsolated()
                self.lines.append("\(state)")
            }
        }
    }

    @Test("an actor's handlers run on the actor, a main-actor class's on the main actor, in the order the states came")
    func handlersRunInTheirIsolation() async throws {
        let scoreboard = Scoreboard()
        let screen = Screen()
        let listener = try NetworkListener { TCP() }
        await screen.watch(listener)
        let server = try await RunningListener(listener) { connection in
            try await connection.send(try await connection.receive(exactly: 1).content)
        }
        try await withNetworkConnection(to: server.endpoint, using: { TCP() }) { connection in
            await scoreboard.watch(connection)
            try await connection.send(Data("x".utf8))
            _ = try await connection.receive(exactly: 1)
        }
        // Another connection observed from the main actor (one observer per connection: setting
        // another replaces it).
        try await withNetworkConnection(to: server.endpoint, using: { TCP() }) { connection in
            await screen.watch(connection)
            try await connection.send(Data("y".utf8))
            _ = try await connection.receive(exactly: 1)
        }
        let lines = await screen.lines
        #expect(lines == ["preparing", "ready", "cancelled"], "\(lines)")
        let seen = await scoreboard.states
        #expect(seen == [.preparing, .ready, .cancelled], "\(seen)")
        _ = await server.stop()
        try await waitUntil("the listener's cancelled seen") { await screen.listenerStates.last == .cancelled }
        let listenerSeen = await screen.listenerStates
        #expect(listenerSeen == [.ready, .cancelled], "\(listenerSeen)")
    }

    /// An actor's executor that counts the jobs it is given: each is the actor being entered
    /// (or re-entered after an await that left it).
    final class CountingExecutor: SerialExecutor {
        let queue = DispatchQueue(label: "IsolationTests.CountingExecutor")
        let jobs = Atomic(0)

        func enqueue(_ job: consuming ExecutorJob) {
            jobs.add(1, ordering: .relaxed)
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
        }
    }

    actor Sender {
        let executor = CountingExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        /// Sends `count` one-byte pieces and receives their echo; returns how many times the
        /// actor was entered meanwhile.
        func sendAndReceive(_ connection: NetworkConnection<TCP>, count: Int) async throws -> (entries: Int, echoed: Int) {
            let before = executor.jobs.load(ordering: .relaxed)
            for _ in 0..<count {
                try await connection.send(Data("s".utf8))
            }
            let echoed = try await connection.receive(exactly: count).content.count
            return (executor.jobs.load(ordering: .relaxed) - before, echoed)
        }
    }

    @Test("sends and receives run on the caller's executor: a send the connection takes at once never leaves the calling actor")
    func sendsStayOnTheCallersActor() async throws {
        let count = 200
        let listener = try NetworkListener { TCP() }
        let server = try await RunningListener(listener) { connection in
            try await connection.send(try await connection.receive(exactly: count).content)
        }
        let sender = Sender()
        try await withNetworkConnection(to: server.endpoint, using: { TCP() }) { connection in
            // (Up once, so that the sends below meet a ready connection.)
            _ = try await connection.establishmentReport()
            let (entries, echoed) = try await sender.sendAndReceive(connection, count: count)
            #expect(echoed == count)
            // A send that hopped off the actor would come back to it: one entry per send. Here:
            // the call itself, the receive's resumption, and slack for a send that had to wait.
            #expect(entries < 10, "\(entries) entries into the actor for \(count) sends and a receive")
        }
        _ = await server.stop()
    }
}
