import Foundation
import Network
import PeerSupport
import Testing

/// When connections and listeners of the 2025 API close: scopes, releases, cancelled tasks.
@Suite("Concurrency.Lifetime")
struct NetworkConnectionLifetimeTests {
    /// A listener that reports, per connection, what its first receive ended with.
    static func reportingListener(_ outcomes: Recorder<String>) async throws -> RunningListener<TCP> {
        try await RunningListener(try NetworkListener { TCP() }) { connection in
            do {
                while true {
                    let (content, metadata) = try await connection.receive(atMost: 1024)
                    if !content.isEmpty { try await connection.send(content) }
                    if metadata.endOfStream {
                        outcomes.append("end of stream")
                        return
                    }
                }
            } catch is CancellationError {
                outcomes.append("cancelled")
            } catch {
                outcomes.append("error \(error)")
            }
        }
    }

    @Test("leaving withNetworkConnection closes the connection: it returns once cancelled, the peer reads the end of the stream, the object is freed")
    func scopeCloses() async throws {
        let outcomes = Recorder<String>()
        let server = try await Self.reportingListener(outcomes)
        let escaped = Weak<NetworkConnection<TCP>>()
        let states = Recorder<NetworkChannel<TCP>.State>()
        try await withNetworkConnection(to: server.endpoint, using: { TCP() }) { connection in
            escaped.object = connection
            connection.onStateUpdate { _, state in states.append(state) }
            try await connection.send(Data("hi".utf8))
            #expect(try await connection.receive(exactly: 2).content == Data("hi".utf8))
        }
        #expect(try await outcomes.wait(count: 1, "the server's receive ends", timeout: 2) == ["end of stream"])
        // (Returned once the observer had seen it.)
        #expect(states.values.last == .cancelled, "\(states.values)")
        try await waitUntil("the connection freed") { escaped.object == nil }
        _ = await server.stop()
    }

    @Test("a thrown error leaves withNetworkConnection closed too, and is rethrown")
    func scopeClosesOnError() async throws {
        struct Boom: Error {}
        let outcomes = Recorder<String>()
        let server = try await Self.reportingListener(outcomes)
        await #expect(throws: Boom.self) {
            try await withNetworkConnection(to: server.endpoint, using: .parameters { TCP() }) { connection in
                // (Nothing sent: an echo arriving after the close would be answered with a reset.)
                let report = try await connection.establishmentReport()
                #expect(report.attemptStartedAfterInterval >= 0)
                throw Boom()
            }
        }
        #expect(try await outcomes.wait(count: 1, "the server's receive ends", timeout: 2) == ["end of stream"])
        _ = await server.stop()
    }

    @Test("the scope's task cancelled while it waits in a receive: CancellationError out of withNetworkConnection, the connection cancelled, the peer sees the end (the scope's one cancellation handler, none per wait)")
    func scopeTaskCancelledInReceive() async throws {
        let outcomes = Recorder<String>()
        let server = try await Self.reportingListener(outcomes)
        let states = Recorder<NetworkChannel<TCP>.State>()
        let progress = Recorder<String>()
        let scope = Task {
            try await withNetworkConnection(to: server.endpoint, using: { TCP() }) { connection in
                connection.onStateUpdate { _, state in states.append(state) }
                try await connection.send(Data("hi".utf8))
                _ = try await connection.receive(exactly: 2)
                progress.append("waiting")
                // (Nothing more comes: only the cancellation ends this.)
                _ = try await connection.receive(exactly: 1)
                progress.append("received")
            }
        }
        _ = try await progress.wait(count: 1, "the scope waits in its second receive", timeout: 5)
        try await Task.sleep(for: .milliseconds(20))
        scope.cancel()
        await #expect(throws: CancellationError.self) { try await scope.value }
        #expect(progress.values == ["waiting"])
        #expect(states.values.last == .cancelled, "\(states.values)")
        #expect(try await outcomes.wait(count: 1, "the server's receive ends", timeout: 2) == ["end of stream"])
        _ = await server.stop()
    }

    @Test("another task waiting in a receive on the scope's connection, cancelled alone, installs its own handler: it sees CancellationError, the connection is cancelled, the scope goes on")
    func otherTaskCancelledInReceive() async throws {
        let outcomes = Recorder<String>()
        let server = try await Self.reportingListener(outcomes)
        let states = Recorder<NetworkChannel<TCP>.State>()
        try await withNetworkConnection(to: server.endpoint, using: { TCP() }) { connection in
            connection.onStateUpdate { _, state in states.append(state) }
            try await connection.send(Data("hi".utf8))
            _ = try await connection.receive(exactly: 2)
            let other = Task { try await connection.receive(exactly: 1) }
            try await Task.sleep(for: .milliseconds(50))
            other.cancel()
            await #expect(throws: CancellationError.self) { try await other.value }
            try await states.wait("cancelled") { $0.last == .cancelled }
            // The scope's task itself is not cancelled: its next operation fails with the
            // connection's error, not CancellationError.
            #expect(!Task.isCancelled)
            await #expect(throws: NWError.self) { try await connection.send(Data("late".utf8)) }
        }
        #expect(try await outcomes.wait(count: 1, "the server's receive ends", timeout: 2) == ["end of stream"])
        _ = await server.stop()
    }

    @Test("releasing the last reference to a started connection closes it")
    func releaseCloses() async throws {
        let outcomes = Recorder<String>()
        let server = try await Self.reportingListener(outcomes)
        do {
            let connection = NetworkConnection(to: server.endpoint) { TCP() }
            try await connection.send(Data("hi".utf8))
            _ = try await connection.receive(exactly: 2)
        }
        #expect(try await outcomes.wait(count: 1, "the server's receive ends", timeout: 2) == ["end of stream"])
        _ = await server.stop()
    }

    @Test("cancelling run cancels every connection's task (their receives throw CancellationError) and returns after them, with the port closed")
    func runCancellation() async throws {
        let outcomes = Recorder<String>()
        let server = try await Self.reportingListener(outcomes)
        var clients: [NetworkConnection<TCP>] = []
        for index in 0..<5 {
            let client = NetworkConnection(to: server.endpoint) { TCP() }
            try await client.send(Data("\(index)".utf8))
            _ = try await client.receive(exactly: 1)
            clients.append(client)
        }
        #expect(await server.stop() is CancellationError)
        // `run` returned: every handler had ended by then.
        #expect(outcomes.values == Array(repeating: "cancelled", count: 5))
        for client in clients {
            #expect(try await client.receive(atMost: 10).metadata.endOfStream)
        }
        let late = NetworkConnection(to: server.endpoint) { TCP().connectionTimeout(1) }
        let lateStates = Recorder<NetworkChannel<TCP>.State>()
        late.onStateUpdate { _, state in lateStates.append(state) }
        late.sendIdempotent(Data("anyone?".utf8))
        try await lateStates.wait("refused") { $0.contains(.waiting(.posix(.ECONNREFUSED))) }
    }

    @Test("a handler that throws ends its own connection; the listener goes on serving")
    func handlerErrors() async throws {
        struct Refused: Error {}
        let server = try await RunningListener(try NetworkListener { TCP() }) { connection in
            let request = try await connection.receive(exactly: 1).content
            if request == Data("x".utf8) { throw Refused() }
            try await connection.send(request)
        }
        let refused = NetworkConnection(to: server.endpoint) { TCP() }
        try await refused.send(Data("x".utf8))
        #expect(try await refused.receive(atMost: 1).metadata.endOfStream)
        let served = NetworkConnection(to: server.endpoint) { TCP() }
        try await served.send(Data("y".utf8))
        #expect(try await served.receive(exactly: 1).content == Data("y".utf8))
        _ = await server.stop()
    }
}

/// Polls `condition` (every 10 ms, for up to `timeout` seconds).
func waitUntil(_ what: String, timeout: Double = 2, _ condition: @Sendable () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while !(await condition()) {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out after \(timeout) s waiting for \(what)")
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// A weak reference a test can read from any task.
final class Weak<Object: AnyObject & Sendable>: @unchecked Sendable {
    // (Written once by the test before it reads it from elsewhere.)
    weak var object: Object?
}
