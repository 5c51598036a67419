import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// Framers above QUIC streams: Apple's sample game framer over a connection's stream, a group's
/// streams and a listener's, and the 2025 API's TLV above a stream it opens.
@Suite("Framer.QUIC", .serialized)
struct FramerQUICTests {
    /// Sends `FramerTests.payloads` with their types on `connection` and expects each back with
    /// its type plus `typeOffset`.
    static func roundTrip(_ connection: NWConnection, typeOffset: UInt32) async throws {
        for (type, payload) in FramerTests.payloads {
            connection.send(content: payload, contentContext: GameFramer.context(type: type), completion: .contentProcessed { _ in })
        }
        for (type, payload) in FramerTests.payloads {
            let reply = try await FramerTests.receiveMessage(connection)
            #expect(reply.error == nil)
            #expect(reply.type == type + typeOffset, "type of the reply to \(type)")
            let same = (reply.payload ?? Data()) == payload
            #expect(same, "payload of the reply to \(type)")
        }
    }

    @Test("the game framer above a QUIC stream, our client and our listener: messages and their types both ways")
    func ourClientAndListener() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let server = GameFramer.parameters(try QUICListenerTests.parameters(identity))
        let (listener, port) = try await FramerTests.echoListener(server, queue: DispatchQueue(label: "framer-quic-server"))
        defer { listener.cancel() }
        let client = GameFramer.parameters(QUICResumptionTests.pinned([Array(try identity.certificateDER)]))
        let connection = QUICResumptionTests.connection(port: Int(port), using: client)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        try await Self.roundTrip(connection, typeOffset: 100)
        let quic = connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata
        #expect(quic?.streamIdentifier == 0)
    }

    @Test("the game framer above a QUIC stream to aioquic's echo server, and above a stream of a group to it: each message comes back whole; the group's end fails the stream")
    func aioquicEchoesFramedMessages() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let parameters = GameFramer.parameters(QUICConnectionTests.pinned(server.certificate))
        let connection = QUICConnectionTests.connection(to: server, using: parameters)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        try await Self.roundTrip(connection, typeOffset: 0)

        let group = NWConnectionGroup(
            with: NWMultiplexGroup(to: .hostPort(host: "localhost", port: NWEndpoint.Port(rawValue: UInt16(server.port))!)),
            using: GameFramer.parameters(QUICConnectionTests.pinned(server.certificate)))
        let groupStates = Recorder<NWConnectionGroup.State>()
        group.stateUpdateHandler = { groupStates.append($0) }
        group.start(queue: DispatchQueue(label: "framer-quic-group"))
        defer { group.cancel() }
        _ = try await groupStates.wait("ready") { $0.contains(.ready) }
        let stream = try #require(NWConnection(from: group))
        let streamStates = Recorder<NWConnection.State>()
        #expect(await TLSInteropTests.settle(stream) == .ready)
        stream.stateUpdateHandler = { streamStates.append($0) }
        try await Self.roundTrip(stream, typeOffset: 0)
        // The group's end fails its streams; a failed connection is cancelled to let it go, as
        // on Apple's platforms (LeakSanitizer holds this test to it).
        group.cancel()
        _ = try await streamStates.wait("the stream fails with its group") { $0.contains { if case .failed = $0 { return true }; return false } }
        stream.cancel()
        _ = try await streamStates.wait("cancelled") { $0.contains(.cancelled) }
    }

    @Test("2025 API: openStream { TLV { $0 } } sends typed messages on a stream and gets them back from aioquic's echo server; WebSocket above a stream throws EPROTONOSUPPORT")
    func tlvAboveAStream() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = QUICNetworkConnectionTests.connection(to: server)
        let stream = try await connection.openStream { quicStream in TLV { quicStream } }
        try await stream.send(Data("first".utf8), type: 7)
        try await stream.send(Data(count: 70_000), type: 8)
        let first = try await stream.receive()
        #expect(first.content == Data("first".utf8))
        #expect(first.metadata.type == 7)
        let second = try await stream.receive()
        #expect(second.content == Data(count: 70_000))
        #expect(second.metadata.type == 8)
        await #expect(throws: NWError.posix(.EPROTONOSUPPORT)) {
            _ = try await connection.openStream { quicStream in WebSocket { quicStream } }
        }
    }

    @Test("2025 API: inboundStreams(prepending: TLV) takes typed messages on the streams the peer opens (our listener opens two towards the client) and answers on them; WebSocket prepended throws EPROTONOSUPPORT")
    func tlvAboveThePeersStreams() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let secIdentity = try identity.secIdentity
        let certificate = try identity.certificateDER
        let listener = try NetworkListener { QUIC(alpn: ["tlv"]).tls.localIdentity(secIdentity) }
        let answers = Recorder<String>()
        let server = Task {
            try await listener.run { connection in
                // Two streams of the server's, each with two typed messages, then the client's answers.
                for index in 0..<2 {
                    let stream = try await connection.openStream { quicStream in TLV { quicStream } }
                    try await stream.send(Data("hello \(index)".utf8), type: 10 + index)
                    try await stream.send(Data(count: 20_000 * (index + 1)), type: 20)
                    let answer = try await stream.receive()
                    answers.append("\(answer.metadata.type) \(String(decoding: answer.content, as: UTF8.self))")
                }
                // (The connection stays until the client ends it.)
                try? await Task.sleep(for: .seconds(60))
            }
        }
        defer { server.cancel() }
        try await waitUntil("the listener ready", timeout: 10) { listener.state == .ready }
        let port = try #require(listener.port)
        let client = NetworkConnection(to: .hostPort(host: "localhost", port: port)) {
            QUIC(alpn: ["tlv"]).tls.certificateValidator { _, trust in trust.certificates.first?.derData == certificate }
        }
        // Only framers go above the peer's streams, refused before anything waits.
        await #expect(throws: NWError.posix(.EPROTONOSUPPORT)) {
            try await client.inboundStreams(prepending: { quicStream in WebSocket { quicStream } }) { _ in }
        }
        let received = Recorder<String>()
        let inbound = Task {
            try await client.inboundStreams(prepending: { quicStream in TLV { quicStream } }) { stream in
                let greeting = try await stream.receive()
                let bulk = try await stream.receive()
                received.append("\(stream.initiator) \(greeting.metadata.type) \(String(decoding: greeting.content, as: UTF8.self)) \(bulk.metadata.type) \(bulk.content.count)")
                try await stream.send(Data("thanks".utf8), type: greeting.metadata.type + 100)
            }
        }
        let streams = try await received.wait(count: 2, "the server's two streams")
        #expect(Set(streams) == ["server 10 hello 0 20 20000", "server 11 hello 1 20 40000"])
        let replies = try await answers.wait(count: 2, "the client's answers")
        #expect(replies == ["110 thanks", "111 thanks"])
        client.core.cancel()
        try await inbound.value
    }
}
