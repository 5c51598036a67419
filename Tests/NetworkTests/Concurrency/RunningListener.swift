import Foundation
import Network
import PeerSupport
import Testing

/// A `NetworkListener` whose `run` goes on in a task of its own, for tests: started, and its
/// port known once it is ready.
struct RunningListener<ApplicationProtocol: OneToOneProtocol>: Sendable {
    let listener: NetworkListener<ApplicationProtocol>
    let task: Task<Void, any Error>
    let port: NWEndpoint.Port

    /// Runs `listener` with `handler` and waits until it listens.
    init(
        _ listener: NetworkListener<ApplicationProtocol>,
        handler: @escaping @Sendable (NetworkConnection<ApplicationProtocol>) async throws -> Void
    ) async throws {
        self.listener = listener
        task = Task { try await listener.run(handler) }
        // (Polled: the test may have its own state observer, which one of ours would replace.)
        try await waitUntil("the listener ready", timeout: 10) {
            switch listener.state {
            case .ready, .failed, .cancelled: true
            case .setup, .waiting: false
            }
        }
        port = try #require(listener.port, "no port in state \(listener.state)")
    }

    /// The listener's address on IPv4 loopback.
    var endpoint: NWEndpoint { .hostPort(host: "127.0.0.1", port: port) }

    /// Cancels `run` and returns what it threw.
    func stop() async -> (any Error)? {
        task.cancel()
        do {
            try await task.value
            return nil
        } catch {
            return error
        }
    }
}
