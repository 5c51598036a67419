import Foundation
import Network
import PeerSupport
import Testing

/// Cancelling at any moment: during the TCP connect, the TLS handshake, or while megabytes of
/// sends are being taken and written, with `cancel()` or `forceCancel()`.
@Suite("TLS.CancelStress", .serialized)
struct TLSCancelStressTests {
    /// One connection's record: its states and the indexes its send completions came with.
    final class Cycle: Sendable {
        let states = Recorder<NWConnection.State>()
        let completions = Recorder<Int>()
    }

    @Test("80 TLS connections cancelled at random moments: every send completes exactly once and in order, cancelled comes last, no socket stays open")
    func cancelAtRandomMoments() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let listener = try NWListener(using: NWParameters(tls: try identity.serverOptions()))
        let serverQueue = DispatchQueue(label: "stress-server")
        // The server reads and drops everything until the client goes away.
        listener.newConnectionHandler = { connection in
            @Sendable func drain() {
                connection.receive(minimumIncompleteLength: 1, maximumLength: 1 << 20) { _, _, isComplete, error in
                    if isComplete || error != nil { connection.cancel() } else { drain() }
                }
            }
            connection.start(queue: serverQueue)
            drain()
        }
        let port = NWEndpoint.Port(rawValue: try await TLSInteropTests.start(listener, queue: serverQueue))!
        defer { listener.cancel() }
        let parameters = TLSInteropTests.pinned(to: try identity.certificateDER)
        let chunk = Data(repeating: 0x5A, count: 64 * 1024)
        let sends = 8

        func run(_ index: Int, cancelAfterMicroseconds delay: Int, force: Bool) async throws -> Cycle {
            let cycle = Cycle()
            let connection = NWConnection(host: "localhost", port: port, using: parameters)
            connection.stateUpdateHandler = { cycle.states.append($0) }
            connection.start(queue: DispatchQueue(label: "stress-\(index)"))
            // Sends issued before ready wait; those made later may complete as they are taken.
            for send in 0..<sends {
                connection.send(content: chunk, completion: .contentProcessed { _ in cycle.completions.append(send) })
                if send == sends / 2 { try await Task.sleep(for: .microseconds(delay / 2)) }
            }
            try await Task.sleep(for: .microseconds(delay / 2))
            if force { connection.forceCancel() } else { connection.cancel() }
            try await cycle.states.wait("connection \(index) cancelled", timeout: 15) { $0.contains(.cancelled) }
            _ = try await cycle.completions.wait(count: sends, "connection \(index)'s \(sends) send completions", timeout: 15)
            return cycle
        }

        var outcomes: [String: Int] = [:]
        for index in 0..<80 {
            let delay = Int.random(in: 0..<30_000)
            let cycle = try await run(index, cancelAfterMicroseconds: delay, force: index % 4 == 3)
            #expect(cycle.completions.values == Array(0..<sends), "connection \(index): completions \(cycle.completions.values)")
            let states = cycle.states.values
            #expect(states.last == .cancelled, "connection \(index): \(states)")
            #expect(states.filter { $0 == .cancelled }.count == 1, "connection \(index): \(states)")
            outcomes[states.contains(.ready) ? "ready" : "not ready", default: 0] += 1
            // A little later nothing else may arrive.
            if index % 20 == 19 {
                try await Task.sleep(for: .milliseconds(50))
                #expect(cycle.completions.count == sends)
                #expect(cycle.states.values == states)
            }
        }
        print("TLS.CancelStress: cancelled after reaching \(outcomes)")
        #expect((outcomes["ready"] ?? 0) > 0 && (outcomes["not ready"] ?? 0) > 0,
                "the random delays should cancel some connections before ready and some after: \(outcomes)")

        // None of this process's sockets is still a client socket to the listener (counted
        // precisely: other suites open and close descriptors meanwhile).
        let deadline = Date().addingTimeInterval(12)
        var stillOpen = TLSInteropTests.clientSockets(toPort: port.rawValue)
        while !stillOpen.isEmpty && Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
            stillOpen = TLSInteropTests.clientSockets(toPort: port.rawValue)
        }
        #expect(stillOpen.isEmpty, "\(stillOpen.count) client sockets still open after 80 cancelled connections")
    }
}
