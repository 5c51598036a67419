#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// `NWConnection` carrying QUIC datagrams (RFC 9221; `NWParameters.quicDatagram(alpn:)`, or
/// QUIC options with `isDatagram`) against aioquic's server (`Tests/PeerScripts/quic_peer.py`,
/// which echoes datagrams) on loopback.
@Suite("Connection.QUICDatagram", .serialized)
struct QUICDatagramTests {
    /// Datagram parameters offering ALPN "echo" whose verify block trusts exactly `certificate`.
    static func pinned(_ certificate: [UInt8]) -> NWParameters {
        let parameters = QUICConnectionTests.pinned(certificate)
        (parameters.defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options)?.isDatagram = true
        return parameters
    }

    static func receiveMessage(_ connection: NWConnection) async -> (Data?, Bool, NWError?) {
        await withCheckedContinuation { continuation in
            connection.receiveMessage { data, _, isComplete, error in continuation.resume(returning: (data, isComplete, error)) }
        }
    }

    static func send(_ connection: NWConnection, _ data: Data) async -> NWError? {
        await withCheckedContinuation { continuation in
            connection.send(content: data, completion: .contentProcessed { continuation.resume(returning: $0) })
        }
    }

    @Test("each send is one datagram and each echo one complete message; maximumDatagramSize is what fits a packet; above it a send fails with EMSGSIZE and the connection stays ready")
    func echo() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        // Packets of at most 1,200 bytes (path MTU discovery would raise the limit while the
        // test runs), so the largest datagram is that less the headers.
        let parameters = Self.pinned(server.certificate)
        (parameters.defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options)?.maxUDPPayloadSize = 1_200
        let connection = QUICConnectionTests.connection(to: server, using: parameters)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        let metadata = connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata
        #expect(metadata?.negotiatedALPN == "echo")
        #expect(metadata?.usableDatagramFrameSize == 65_536)
        let largest = connection.maximumDatagramSize
        #expect((1_100..<1_200).contains(largest), "\(largest)")
        for text in ["one", "two", "three"] {
            #expect(await Self.send(connection, Data(text.utf8)) == nil)
            let (data, isComplete, error) = await Self.receiveMessage(connection)
            #expect(data.map { String(decoding: $0, as: UTF8.self) } == text)
            #expect(isComplete)
            #expect(error == nil)
        }
        let full = Data((0..<largest).map { UInt8(truncatingIfNeeded: $0) })
        #expect(await Self.send(connection, full) == nil)
        #expect(await Self.receiveMessage(connection).0 == full, "the largest datagram comes back whole")
        #expect(await Self.send(connection, Data(count: largest + 1)) == .posix(.EMSGSIZE))
        #expect(await Self.send(connection, Data(count: 70_000)) == .posix(.EMSGSIZE), "above the peer's frame limit too")
        #expect(connection.state == .ready)
        #expect(await Self.send(connection, Data("after".utf8)) == nil)
        #expect(await Self.receiveMessage(connection).0 == Data("after".utf8))
        try await QUICConnectionTests.waitUntilCancelled(connection)
        try await server.process.waitForOutput(containing: "closed 0")
    }

    @Test("with path MTU discovery on, maximumDatagramSize follows the path (loopback: above what fits 1,200-byte packets once probed), and a datagram of that size reaches the peer")
    func limitFollowsThePath() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = QUICConnectionTests.connection(to: server, using: Self.pinned(server.certificate))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        #expect(await Self.send(connection, Data("warm".utf8)) == nil)
        _ = await Self.receiveMessage(connection)
        // ngtcp2 probes the path within a round trip or two after the handshake.
        var largest = connection.maximumDatagramSize
        for _ in 0..<100 where largest < 1_200 {
            await pause(milliseconds: 20)
            largest = connection.maximumDatagramSize
        }
        #expect((1_200..<65_536).contains(largest), "\(largest)")
        #expect(await Self.send(connection, Data(count: largest)) == nil)
        // (aioquic's own packets stay at 1,200 bytes: it reports the datagram instead of echoing it.)
        try await server.process.waitForOutput(containing: "datagram received \(largest)\n")
        connection.cancel()
    }

    @Test("200 datagrams the peer sends at once arrive as 200 distinct whole messages (loopback loses none), read one receive at a time")
    func burst() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = QUICConnectionTests.connection(to: server, using: Self.pinned(server.certificate))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        #expect(await Self.send(connection, Data("burst:200".utf8)) == nil)
        var seen = Set<String>()
        for _ in 0..<200 {
            let (data, isComplete, error) = await Self.receiveMessage(connection)
            #expect(isComplete && error == nil)
            if let data { seen.insert(String(decoding: data, as: UTF8.self)) }
        }
        #expect(seen == Set((0..<200).map { "burst \($0)" }))
        connection.cancel()
    }

    @Test("a peer that announces no datagram support: the datagram connection fails with EPROTONOSUPPORT (a stream connection to it works)")
    func peerWithoutDatagrams() async throws {
        guard let server = try await AioquicServer.start(datagrams: false) else { return }
        defer { server.stop() }
        let connection = QUICConnectionTests.connection(to: server, using: Self.pinned(server.certificate))
        #expect(await TLSInteropTests.settle(connection) == .failed(.posix(.EPROTONOSUPPORT)))
        connection.cancel()
        let stream = QUICConnectionTests.connection(to: server, using: QUICConnectionTests.pinned(server.certificate))
        #expect(await TLSInteropTests.settle(stream) == .ready)
        #expect(await TLSInteropTests.exchange(stream, "still a stream") == "still a stream")
        stream.cancel()
    }

    @Test(".quicDatagram(alpn:) sets isDatagram; with maxDatagramFrameSize left at 0 the engine announces 65,535, else the value set; a stream connection announces none")
    func settings() {
        let options = NWParameters.quicDatagram(alpn: ["echo"]).defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options
        #expect(options?.isDatagram == true)
        #expect(options?.quicSettings.maxDatagramFrameSize == 65_535)
        options?.maxDatagramFrameSize = 1_500
        #expect(options?.quicSettings.maxDatagramFrameSize == 1_500)
        let stream = NWProtocolQUIC.Options(alpn: ["echo"])
        #expect(stream.quicSettings.maxDatagramFrameSize == 0)
        #expect(NWParameters.quicDatagram(alpn: ["echo"]).flowTransport == .quicDatagram)
    }
}
