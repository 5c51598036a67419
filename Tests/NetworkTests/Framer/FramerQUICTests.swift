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
}
