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
        let states = Recorder<NetworkListener<ApplicationProtocol>.State>()
        listener.onStateUpdate { _, state in states.append(state) }
        self.listener = listener
        task = Task { try await listener.run(handler) }
        let seen = try await states.wait("the listener ready") { $0.contains(.ready) || $0.contains { if case .failed = $0 { true } else { false } } }
        port = try #require(listener.port, "no port once \(seen)")
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
