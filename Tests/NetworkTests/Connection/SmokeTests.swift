import Dispatch
import Foundation
import Network
import Testing

@Suite("Connection.Smoke")
struct ConnectionSmokeTests {
    @Test func tcpEchoRoundTrip() async throws {
        let listener = try NWListener(using: .tcp, on: .any)
        let queue = DispatchQueue(label: "smoke")
        let ready = AsyncStream<NWEndpoint.Port>.makeStream()
        listener.stateUpdateHandler = { state in
            if state == .ready, let port = listener.port { ready.continuation.yield(port) }
        }
        listener.newConnectionHandler = { connection in
            connection.start(queue: queue)
            @Sendable func echo() {
                connection.receive(minimumIncompleteLength: 1, maximumLength: 65536) { data, _, isComplete, error in
                    if let data, !data.isEmpty {
                        connection.send(content: data, completion: .contentProcessed { _ in })
                    }
                    if isComplete || error != nil {
                        connection.cancel()
                    } else {
                        echo()
                    }
                }
            }
            echo()
        }
        listener.start(queue: queue)
        var iterator = ready.stream.makeAsyncIterator()
        let port = try #require(await iterator.next())

        let client = NWConnection(host: "127.0.0.1", port: port, using: .tcp)
        let states = AsyncStream<NWConnection.State>.makeStream()
        client.stateUpdateHandler = { states.continuation.yield($0) }
        client.start(queue: queue)
        var stateIterator = states.stream.makeAsyncIterator()
        #expect(await stateIterator.next() == .preparing)
        #expect(await stateIterator.next() == .ready)
        client.send(content: Data("hello".utf8), completion: .contentProcessed { error in #expect(error == nil) })
        let reply: Data? = await withCheckedContinuation { continuation in
            client.receive(minimumIncompleteLength: 5, maximumLength: 5) { data, _, _, _ in
                continuation.resume(returning: data)
            }
        }
        #expect(reply == Data("hello".utf8))
        client.cancel()
        #expect(await stateIterator.next() == .cancelled)
        listener.cancel()
    }
}
