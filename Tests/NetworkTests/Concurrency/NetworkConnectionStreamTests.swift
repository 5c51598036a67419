import Foundation
import Network
import PeerSupport
import Testing

/// `NetworkConnection` over TCP against our own `NetworkListener`, both on loopback: lazy
/// start, byte ranges, integers, the end of the stream.
@Suite("Concurrency.Stream")
struct NetworkConnectionStreamTests {
    @Test("send starts the connection; receive(exactly:), receive(atLeast:atMost:) and receive(as:) get what an echo listener sends back")
    func echo() async throws {
        let server = try await RunningListener(try NetworkListener { TCP() }) { connection in
            while true {
                let (content, metadata) = try await connection.receive(atLeast: 1, atMost: 65536)
                if !content.isEmpty { try await connection.send(content) }
                if metadata.endOfStream {
                    try await connection.send(Data(), endOfStream: true)
                    return
                }
            }
        }
        let connection = NetworkConnection(to: server.endpoint) { TCP() }
        #expect(connection.state == .setup)
        try await connection.send(Data("Hello, world!".utf8))
        #expect(connection.state == .ready)
        let greeting = try await connection.receive(exactly: 13)
        #expect(String(decoding: greeting.content, as: UTF8.self) == "Hello, world!")
        #expect(greeting.metadata.endOfStream == false)

        try await connection.send(UInt32(0xDEAD_BEEF))
        try await connection.send(UInt16(7))
        #expect(try await connection.receive(as: UInt32.self).content == 0xDEAD_BEEF)
        #expect(try await connection.receive(as: UInt16.self).content == 7)

        let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        try await connection.send(payload, endOfStream: true)
        var echoed = Data()
        while true {
            let (chunk, metadata) = try await connection.receive(atMost: 8192)
            #expect(chunk.count <= 8192)
            echoed += chunk
            if metadata.endOfStream { break }
        }
        #expect(echoed == payload)
        #expect(await server.stop() is CancellationError)
    }

    @Test("sends return at once while the socket takes them; one it cannot take waits, and cancelling its task then throws CancellationError and cancels the connection")
    func aSendThatWaitsCanBeCancelled() async throws {
        // The peer never reads: the sockets' buffers and then the send budget fill.
        let server = try await RunningListener(try NetworkListener { TCP() }) { _ in
            try await Task.sleep(for: .seconds(60))
        }
        let connection = NetworkConnection(to: server.endpoint) { TCP() }
        let chunk = Data(repeating: 7, count: 64 * 1024)
        try await expectCancelledWaitEndsAtOnce { try await connection.send(chunk) }
        try await waitUntil("the connection cancelled", timeout: 10) { connection.state == .cancelled }
        _ = await server.stop()
    }

    @Test("receive(as:) at the end of the stream throws ENODATA; receive(exactly:) returns what came with endOfStream")
    func endOfStream() async throws {
        let server = try await RunningListener(try NetworkListener { TCP() }) { connection in
            try await connection.send(Data([1, 2, 3]), endOfStream: true)
        }
        let connection = NetworkConnection(to: server.endpoint) { TCP() }
        let first = try await connection.receive(exactly: 10)
        #expect(first.content == Data([1, 2, 3]))
        #expect(first.metadata.endOfStream)
        await #expect(throws: NWError.posix(.ENODATA)) { try await connection.receive(as: UInt32.self) }
        _ = await server.stop()
    }
}
