import Foundation
import PeerSupport
import Security
import Testing

@testable import Network

/// The 2025 API's QUIC: `NetworkConnection<QUIC>` (streams opened and accepted, datagrams) against
/// aioquic's server, and `NetworkListener<QUIC>` against aioquic's client.
@Suite("Concurrency.QUIC", .serialized)
struct QUICNetworkConnectionTests {
    /// A QUIC connection to aioquic's echo server whose validator trusts exactly its certificate.
    static func connection(to server: AioquicServer) -> NetworkConnection<QUIC> {
        let certificate = Data(server.certificate)
        return NetworkConnection(to: .hostPort(host: "localhost", port: NWEndpoint.Port(rawValue: UInt16(server.port))!)) {
            QUIC(alpn: ["echo"]).tls.certificateValidator { _, trust in trust.certificates.first?.derData == certificate }
        }
    }

    /// Everything `stream` receives up to its end.
    static func readToEnd<AP: StreamProtocol>(_ stream: QUIC.Stream<AP>) async throws -> Data {
        var collected = Data()
        while true {
            let (data, metadata) = try await stream.receive(atLeast: 1, atMost: 65_536)
            collected.append(data)
            guard let stream = metadata as? QUICStream.Metadata else { throw NWError.posix(.EPROTO) }
            if stream.endOfStream { return collected }
        }
    }

    @Test("openStream gives streams 0 and 4, bidirectional, this side's: bytes and the end of stream go both ways; the connection's metadata has the ALPN")
    func openedStreamsEcho() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = Self.connection(to: server)
        let first = try await connection.openStream()
        #expect(first.streamID == 0)
        #expect(first.directionality == .bidirectional)
        #expect(first.initiator == .client)
        #expect(first.parent == connection)
        try await first.send(Data("hello over quic".utf8), endOfStream: true)
        #expect(String(decoding: try await Self.readToEnd(first), as: UTF8.self) == "hello over quic")
        let second = try await connection.openStream()
        #expect(second.streamID == 4)
        try await second.send(UInt32(0x6162_6364), endOfStream: true)
        #expect(String(decoding: try await Self.readToEnd(second), as: UTF8.self) == "abcd")
        let quic = connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata
        #expect(quic?.negotiatedALPN == "echo")
        #expect(connection.state == .ready)
        await connection.closeAndWait()
        try await server.process.waitForOutput(containing: "closed 0")
    }

    @Test("inboundStreams hands over the server's streams: a unidirectional one answering ours, and a bidirectional one it opened; it returns when the connection is cancelled")
    func inboundStreamsFromTheServer() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = Self.connection(to: server).start()
        let received = Recorder<String>()
        let inbound = Task {
            try await connection.inboundStreams { stream in
                let text = String(decoding: try await Self.readToEnd(stream), as: UTF8.self)
                received.append("\(stream.streamID) \(stream.directionality) \(stream.initiator) \(text)")
            }
        }
        let uni = try await connection.openStream(directionality: .unidirectional)
        #expect(uni.streamID == 2)
        #expect(uni.directionality == .unidirectional)
        try await uni.send(Data("one way".utf8), endOfStream: true)
        let asking = try await connection.openStream()
        try await asking.send(Data("push:5".utf8), endOfStream: true)
        #expect(String(decoding: try await Self.readToEnd(asking), as: UTF8.self) == "pushed")
        let streams = try await received.wait(count: 2, "two streams of the server's")
        #expect(Set(streams) == ["3 unidirectional server uni:one way", "1 bidirectional server ppppp"])
        connection.core.cancel()
        try await inbound.value
    }

    @Test("datagrams: the same object on each access; each send one datagram, echoed whole; one larger than the connection's limit fails with EMSGSIZE and the connection stays")
    func datagrams() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = Self.connection(to: server)
        let datagrams = try await connection.datagrams
        #expect(try await connection.datagrams === datagrams)
        #expect(datagrams.parent == connection)
        for index in 0..<3 { try await datagrams.send(Data("datagram \(index)".utf8)) }
        var echoed: Set<String> = []
        for _ in 0..<3 { echoed.insert(String(decoding: try await datagrams.receive().content, as: UTF8.self)) }
        #expect(echoed == ["datagram 0", "datagram 1", "datagram 2"])
        let limit = datagrams.maximumDatagramSize
        #expect(limit > 1_000, "\(limit)")
        // Larger than any limit the connection can come to: the limit grows while ngtcp2's path
        // MTU probes succeed, so `limit + 1` could fit by the time it is sent (seen under TSan).
        // No UDP datagram carries 64 KiB of payload.
        await #expect(throws: NWError.posix(.EMSGSIZE)) { try await datagrams.send(Data(count: 65_536)) }
        let stream = try await connection.openStream()
        try await stream.send(Data("still here".utf8), endOfStream: true)
        #expect(String(decoding: try await Self.readToEnd(stream), as: UTF8.self) == "still here")
    }

    @Test("NetworkListener<QUIC>: each client's QUIC connection is handed over once; its streams come through inboundStreams and are echoed to aioquic's client")
    func listenerHandsOverConnections() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let secIdentity = try identity.secIdentity
        let listener = try NetworkListener { QUIC(alpn: ["echo"]).tls.localIdentity(secIdentity) }
        let connections = Recorder<String>()
        let task = Task {
            try await listener.run { connection in
                connections.append(connection.debugDescription)
                try await connection.inboundStreams { stream in
                    let data = try await Self.readToEnd(stream)
                    try await stream.send(data, endOfStream: true)
                }
            }
        }
        defer { task.cancel() }
        try await waitUntil("the listener ready", timeout: 10) { listener.state == .ready }
        let port = try #require(listener.port)
        guard let client = try await QUICListenerTests.client(port: port.rawValue, identity: identity, streams: 3) else { return }
        defer { client.stop() }
        try await client.waitForOutput(containing: "done")
        for index in 0..<3 { try await client.waitForOutput(containing: "echo \(index) message \(index)\n") }
        #expect(connections.values.count == 1)
    }
}
