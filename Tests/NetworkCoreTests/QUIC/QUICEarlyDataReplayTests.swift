import Foundation
import NIOCore
import PeerSupport
import Testing

@testable import NetworkCore

/// 0-RTT replay (RFC 8446, 8; RFC 9001, 9.2) between real ngtcp2 + GnuTLS bindings, packets
/// passed by hand: a client resumes with early data, and the same first flight is then fed to
/// a second server connection of the same listener (same ticket key and anti-replay state), as
/// an attacker who captured it would.
@Suite("QUIC.EarlyDataReplay")
struct QUICEarlyDataReplayTests {
    static let clientAddress = try! SocketAddress(ipAddress: "127.0.0.1", port: 40_001)
    static let serverAddress = try! SocketAddress(ipAddress: "127.0.0.1", port: 4_433)

    /// Server settings with a throwaway self-signed P-256 identity for "localhost".
    static func serverSettings() throws -> FlowTLSConfiguration {
        guard let openssl = PeerProcess.executable("openssl", package: "openssl") else { throw FlowError.posix(ENOENT) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nwreplay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.der").path, certificate = directory.appendingPathComponent("cert.der").path
        let made = try ShortTool.run(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-keyout", key + ".pem", "-out", certificate + ".pem",
        ])
        try #require(made.status == 0, "\(made.output)")
        _ = try ShortTool.run(openssl, ["x509", "-in", certificate + ".pem", "-outform", "DER", "-out", certificate])
        _ = try ShortTool.run(openssl, ["pkey", "-in", key + ".pem", "-outform", "DER", "-out", key])
        var settings = FlowTLSConfiguration()
        settings.applicationProtocols = ["echo"]
        settings.certificateChain = [Array(try Data(contentsOf: URL(fileURLWithPath: certificate)))]
        settings.privateKey = Array(try Data(contentsOf: URL(fileURLWithPath: key)))
        return settings
    }

    static func clientSettings() -> FlowTLSConfiguration {
        var settings = FlowTLSConfiguration()
        settings.applicationProtocols = ["echo"]
        // (No verification: the chain is not what this test is about.)
        settings.peerAuthenticationRequired = false
        return settings
    }

    /// A server connection for the client `flight` starts.
    static func server(for flight: [ByteBuffer], settings: FlowTLSConfiguration, tickets: QUICServerTickets, now: UInt64) throws -> QUICConnectionBinding {
        let retry = try QUICRetry()
        guard let first = flight.first,
            case .accept(let initial) = retry.check(first, from: clientAddress, requireAddressValidation: false, now: now)
        else { throw FlowError.posix(EPROTO) }
        return try QUICConnectionBinding(
            role: .server(initial), settings: settings, local: serverAddress, remote: clientAddress, now: now, tickets: tickets)
    }

    /// Passes packets both ways, running the timers ngtcp2 sets (pacing, acknowledgement delay)
    /// when neither side has a packet, until 2 s (of its clock) pass without one; returns the events each
    /// side saw.
    @discardableResult
    static func exchange(_ client: QUICConnectionBinding, _ server: QUICConnectionBinding, now: inout UInt64) -> (client: [QUICEvent], server: [QUICEvent]) {
        var events: (client: [QUICEvent], server: [QUICEvent]) = ([], [])
        let end = now + 2_000_000_000
        for _ in 0..<200 {
            client.writePackets(now: now)
            let up = client.takePackets()
            for packet in up { server.receive(packet, from: clientAddress, now: now) }
            server.writePackets(now: now)
            let down = server.takePackets()
            for packet in down { client.receive(packet, from: serverAddress, now: now) }
            events.client += client.takeEvents()
            events.server += server.takeEvents()
            if up.isEmpty && down.isEmpty {
                guard let next = [client.expiry, server.expiry].compactMap({ $0 }).min(), next <= end else { break }
                now = max(now, next)
                client.handleExpiry(now: now)
                server.handleExpiry(now: now)
            }
        }
        return events
    }

    static func earlyBytes(_ events: [QUICEvent]) -> [String] {
        events.compactMap { event in
            guard case .streamData(_, let bytes, _) = event, bytes.readableBytes > 0 else { return nil }
            return String(buffer: bytes)
        }
    }

    static func isEstablished(_ event: QUICEvent) -> Bool {
        if case .established = event { return true }
        return false
    }

    @Test("the server takes a resuming client's 0-RTT data once; the same first flight replayed to another connection of the listener gets its handshake, but not the early data")
    func replayedEarlyDataIsRefused() throws {
        let serverSettings = try Self.serverSettings()
        let tickets = try QUICServerTickets(acceptsEarlyData: true)
        var now: UInt64 = 1_000_000_000

        // A full handshake, whose ticket the client keeps.
        var ticket: QUICResumption?
        let first = try QUICConnectionBinding(
            role: .client(serverName: "localhost"), settings: Self.clientSettings(), local: Self.clientAddress,
            remote: Self.serverAddress, now: now)
        first.onTicket = { ticket = $0 }
        first.writePackets(now: now)
        let firstFlight = first.takePackets()
        let firstServer = try Self.server(for: firstFlight, settings: serverSettings, tickets: tickets, now: now)
        for packet in firstFlight { firstServer.receive(packet, from: Self.clientAddress, now: now) }
        Self.exchange(first, firstServer, now: &now)
        let resumption = try #require(ticket, "the server issued a ticket")

        // The resuming client's first flight carries its early data.
        let client = try QUICConnectionBinding(
            role: .client(serverName: "localhost"), settings: Self.clientSettings(), local: Self.clientAddress,
            remote: Self.serverAddress, now: now, resumption: resumption, earlyData: ByteBuffer(string: "GET /once"))
        client.writePackets(now: now)
        let flight = client.takePackets()
        #expect(flight.count >= 1)

        let server = try Self.server(for: flight, settings: serverSettings, tickets: tickets, now: now)
        for packet in flight { server.receive(packet, from: Self.clientAddress, now: now) }
        let taken = server.takeEvents()
        #expect(Self.earlyBytes(taken) == ["GET /once"], "0-RTT data before the handshake is done")
        let rest = Self.exchange(client, server, now: &now)
        #expect((taken + rest.server).contains(where: Self.isEstablished))
        #expect(rest.client.contains(where: Self.isEstablished))

        // The same flight again, to a new connection of the same listener.
        let replayed = try Self.server(for: flight, settings: serverSettings, tickets: tickets, now: now)
        for packet in flight { replayed.receive(packet, from: Self.clientAddress, now: now) }
        replayed.writePackets(now: now)
        #expect(!replayed.takePackets().isEmpty, "the replayed hello is answered (a handshake that cannot finish)")
        #expect(Self.earlyBytes(replayed.takeEvents()).isEmpty, "the replayed early data is not taken")
        #expect(tickets.rememberedHellos == 1)
    }
}
