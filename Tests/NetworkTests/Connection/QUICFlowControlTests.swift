import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// Flow control between our QUIC client and listener: what a receiver takes late must still
/// open the sender's window.
@Suite("Connection.QUICFlowControl", .serialized)
struct QUICFlowControlTests {
    @Test("a client that reads nothing while the listener sends 6 MiB (past the stream's and the connection's windows), then reads it all: each read widens the window at once, so every byte arrives and the stream ends, long before the 5 s idle timeout")
    func lateReaderOpensTheWindow() async throws {
        let identity = try TLSInteropTests.Identity.make()
        defer { try? FileManager.default.removeItem(at: identity.directory) }
        let payload = QUICConnectionTests.seededPayload(size: 6 << 20, seed: 307)
        let queue = DispatchQueue(label: "quic-flow-control")
        let listener = try NWListener(using: try QUICListenerTests.parameters(identity), on: .any)
        let accepted = Recorder<NWConnection>()
        listener.newConnectionHandler = { [payload] connection in
            accepted.append(connection)
            connection.start(queue: queue)
            // Waits for the client's first bytes (its stream is opened by them), then sends.
            connection.receive(minimumIncompleteLength: 1, maximumLength: 64) { _, _, _, _ in
                connection.send(content: payload, contentContext: .finalMessage, isComplete: true, completion: .contentProcessed { _ in })
            }
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        defer { listener.cancel() }

        let parameters = QUICConnectionTests.pinned(Array(try identity.certificateDER))
        (parameters.defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options)?.idleTimeout = 5_000
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: parameters)
        defer { connection.cancel() }
        #expect(await TLSInteropTests.settle(connection) == .ready)
        connection.send(content: Data("go".utf8), completion: .contentProcessed { _ in })
        // The sender fills every window meanwhile and waits for an update.
        try await Task.sleep(for: .seconds(1))
        let started = Date()
        let (received, ended) = await QUICConnectionTests.receiveToEnd(connection)
        let seconds = Date().timeIntervalSince(started)
        #expect(received.count == payload.count && ended, "\(received.count) bytes, ended: \(ended), state \(connection.state), \(seconds) s")
        let unchanged = received == payload
        #expect(unchanged)
        #expect(seconds < 4, "\(seconds) s")
        for served in accepted.values { served.cancel() }
    }
}
