import CNGTCP2
import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network
@testable import NetworkCore

/// Between two loopback addresses a connection's packets grow past what path MTU discovery
/// would find, once the handshake is over (`QUICConnectionBinding+PacketSize`). Seen from a
/// UDP relay between our client and our listener (`Tests/PeerScripts/udp_relay.py`), which
/// measures every datagram it passes on.
@Suite("Connection.QUICLoopbackPackets", .serialized)
struct QUICLoopbackPacketTests {
    /// The relay's largest datagrams: client to server with a long header, with a short one,
    /// then server to client the same.
    static func sizes(control: UInt16) async throws -> [Int] {
        try await QUICListenerMoveTests.command("sizes", control: control).split(separator: " ").compactMap { Int($0) }
    }

    @Test("our client and listener on loopback: the handshake's datagrams stay at 1,200 bytes, the stream's packets grow to the loopback size both ways (past 1,452, the most a probed path gets), and 4 MiB come back whole; the client's maxUDPPayloadSize still caps its own",
          arguments: [0, 1_300])
    func packetsGrowAfterTheHandshake(clientCap: Int) async throws {
        let identity = try TLSInteropTests.Identity.make()
        defer { try? FileManager.default.removeItem(at: identity.directory) }
        let queue = DispatchQueue(label: "quic-loopback")
        let accepted = Recorder<NWConnection>()
        let (listener, port) = try await QUICListenerTests.echoListener(try QUICListenerTests.parameters(identity), accepted: accepted, queue: queue)
        defer { listener.cancel() }
        guard let (relay, inside, control) = try await QUICListenerMoveTests.relay(to: port) else { return }
        defer { relay.stop() }
        let parameters = QUICConnectionTests.pinned(Array(try identity.certificateDER))
        if clientCap > 0 { (parameters.defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options)?.maxUDPPayloadSize = clientCap }
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: inside)!, using: parameters)
        defer { connection.cancel() }
        _ = await QUICConnectionTests.echoWhole(size: 4 << 20, seed: 211, over: connection)

        let seen = try await Self.sizes(control: control)
        // (Datagrams relayed each way and how long ago the last one: a stalled side shows.)
        let stats = try await QUICListenerMoveTests.command("stats", control: control)
        try #require(seen.count == 4, "relay said \(seen), \(stats)")
        let loopback = QUICConnectionBinding.loopbackPacketSize
        #expect(seen[0] == 1_200 && seen[2] <= 1_200, "handshake datagrams: client \(seen[0]), server \(seen[2]); \(stats)")
        if clientCap > 0 {
            #expect(seen[1] >= 1_200 && seen[1] <= clientCap, "client's packets: at most \(seen[1]) bytes, its cap \(clientCap)")
        } else {
            #expect(seen[1] > 1_452 && seen[1] <= loopback, "client's packets: at most \(seen[1]) bytes")
        }
        #expect(seen[3] > 1_452 && seen[3] <= loopback, "server's packets: at most \(seen[3]) bytes")
        // Closed while the relay still runs: packets to a relay gone would come back refused.
        try await QUICConnectionTests.waitUntilCancelled(connection)
        for stream in accepted.values { stream.cancel() }
    }

    @Test("the loopback settings: ngtcp2 stops shaping packets and probing the path; the size is the loopback one, or the application's maxUDPPayloadSize when smaller")
    func loopbackSettings() {
        var settings = ngtcp2_settings()
        cngtcp2_settings_default(&settings)
        QUICConnectionBinding.sizeForLoopback(&settings, requested: 0)
        #expect(settings.no_tx_udp_payload_size_shaping == 1 && settings.no_pmtud == 1)
        #expect(settings.max_tx_udp_payload_size == QUICConnectionBinding.loopbackPacketSize)
        QUICConnectionBinding.sizeForLoopback(&settings, requested: 1_300)
        #expect(settings.max_tx_udp_payload_size == 1_300)
        QUICConnectionBinding.sizeForLoopback(&settings, requested: 100_000)
        #expect(settings.max_tx_udp_payload_size == QUICConnectionBinding.loopbackPacketSize)
    }
}
