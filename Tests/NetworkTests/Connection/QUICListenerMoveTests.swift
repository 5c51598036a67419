#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// Our QUIC listener and a client that seems to move: a UDP relay between them
/// (`Tests/PeerScripts/udp_relay.py`, loopback only) stands for a NAT. Copies of the client's
/// packets sent from another address (one replayed as it was, one forged) must move nothing; a
/// new outside address of the relay (a rebinding, with the old one closed) must be followed.
@Suite("Listener.QUICMoves", .serialized)
struct QUICListenerMoveTests {
    /// The relay to the listener on `port`: the process, the port clients send to, its control port.
    static func relay(to port: UInt16) async throws -> (PeerProcess, UInt16, UInt16)? {
        guard let python = PeerProcess.executable("python3", package: "python3") else { return nil }
        let process = try PeerProcess(python, [PythonPeer.scripts.appendingPathComponent("udp_relay.py").path, "127.0.0.1", "\(port)"])
        try await process.waitForOutput(containing: "\n")
        let words = String(decoding: process.standardOutput, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard words.count >= 3, words[0] == "relay", let inside = UInt16(words[1]), let control = UInt16(words[2]) else {
            process.stop()
            Issue.record("relay said \(words)")
            return nil
        }
        return (process, inside, control)
    }

    /// Sends `command` to the relay's control port and returns its answer (2 s at most).
    static func command(_ command: String, control: UInt16) async throws -> String {
        try await offload {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            guard fd >= 0 else { throw SocketError("socket") }
            defer { close(fd) }
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = control.bigEndian
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            let sent = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                    Array(command.utf8).withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, target, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
            guard sent >= 0 else { throw SocketError("sendto") }
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count >= 0 else { throw SocketError("no answer from the relay") }
            return String(decoding: buffer.prefix(count), as: UTF8.self)
        }
    }

    @Test("copies of the client's packets from another address (replayed, forged) move nothing: no answer goes there and the stream goes on; a rebinding of the client's address is followed (a refusal from the old one ends nothing) and the stream goes on")
    func copiesMoveNothingRebindingIsFollowed() async throws {
        let identity = try TLSInteropTests.Identity.make()
        defer { try? FileManager.default.removeItem(at: identity.directory) }
        let queue = DispatchQueue(label: "quic-moves")
        let accepted = Recorder<NWConnection>()
        let (listener, port) = try await QUICListenerTests.echoListener(try QUICListenerTests.parameters(identity), accepted: accepted, queue: queue)
        defer { listener.cancel() }
        guard let (relay, inside, control) = try await Self.relay(to: port) else { return }
        defer { relay.stop() }
        let connection = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: inside)!, using: QUICConnectionTests.pinned(Array(try identity.certificateDER)))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        #expect(try await QUICMigrationClientTests.echo(connection, "through the relay") == "through the relay")

        // The server side PINGs after a second of silence, and nothing of the client's reaches it
        // meanwhile: were its socket moved to the copies' address, the PINGs would go there.
        let served = try await accepted.wait(count: 1, "the served stream")
        (served[0].metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)?.keepAlive = .seconds(1)
        #expect(try await Self.command("pause", control: control) == "ok")
        #expect(try await Self.command("replay", control: control) == "ok")
        #expect(try await Self.command("forge", control: control) == "ok")
        try await Task.sleep(for: .milliseconds(2_500))
        #expect(try await Self.command("attacker", control: control) == "0", "the listener answered the copies' address")
        #expect(try await Self.command("resume", control: control) == "ok")
        #expect(try await QUICMigrationClientTests.echo(connection, "after the copies") == "after the copies")

        #expect(try await Self.command("rebind", control: control) == "ok")
        // A PING goes to the old address before the client speaks again, and is refused there
        // (ICMP port unreachable): that must not end the server's connection.
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(try await QUICMigrationClientTests.echo(connection, "after the rebinding") == "after the rebinding")
        #expect(connection.state == .ready)
        for stream in accepted.values { stream.cancel() }
    }
}
