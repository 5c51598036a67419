import Foundation
import Network
import PeerSupport
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
}
