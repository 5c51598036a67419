import Foundation
import Network
import PeerSupport
import Testing

/// `NetworkConnection<UDP>` and `NetworkListener` over UDP as a drone controller written for
/// the 2025 API uses them: commands to the drone and its answers on one connection, its state
/// datagrams on a connection bound to a local port.
@Suite("Concurrency.Datagram")
struct NetworkConnectionDatagramTests {
    @Test("commands and answers: NetworkConnection(to:using: { UDP() }) against a UDP NetworkListener on .localPort(_:), one connection per peer")
    func commands() async throws {
        let port = try NWEndpoint.Port(rawValue: freePort(datagram: true))!
        // (Each peer's endpoint with its first datagram: a port found free can still meet a
        // parallel test's stray datagram, which is then a peer of its own, not one of these.)
        let peers = Recorder<(endpoint: String, first: String)>()
        let drone = try await RunningListener(try NetworkListener(using: .parameters { UDP() }.localPort(port))) { connection in
            var first = true
            while true {
                let (command, metadata) = try await connection.receive()
                if first {
                    first = false
                    peers.append((connection.remoteEndpoint.map { "\($0)" } ?? "none", String(decoding: command, as: UTF8.self)))
                }
                #expect(metadata.other.contains { $0 is NWProtocolUDP.Metadata })
                try await connection.send(Data("ok ".utf8) + command)
            }
        }
        #expect(drone.port == port)
        let controller = NetworkConnection(to: .hostPort(host: "127.0.0.1", port: port), using: { UDP() })
        for command in ["command", "takeoff", "land"] {
            try await controller.send(Data(command.utf8))
            let answer = try await controller.receive().content
            #expect(String(decoding: answer, as: UTF8.self) == "ok \(command)")
        }
        let second = NetworkConnection(to: .hostPort(host: "127.0.0.1", port: port)) { UDP() }
        try await second.send(Data("battery?".utf8))
        #expect(String(decoding: try await second.receive().content, as: UTF8.self) == "ok battery?")
        let ours: @Sendable ([(endpoint: String, first: String)]) -> [String] = { peers in
            peers.filter { ["command", "battery?"].contains($0.first) }.map(\.endpoint)
        }
        let seen = ours(try await peers.wait("the two controllers") { ours($0).count >= 2 })
        #expect(seen.count == 2 && Set(seen).count == 2, "\(seen)")
        #expect(seen.allSatisfy { $0.hasPrefix("127.0.0.1:") }, "\(seen)")
        #expect(await drone.stop() is CancellationError)
    }

    @Test("state datagrams: a connection to .hostPort(host:port: .any) with .parameters { UDP() }.localPort(_:) receives what a peer sends to that port")
    func stateStream() async throws {
        // (A port found free may be taken by a parallel test before the bind: then another.)
        var attempt = 0
        var local: UInt16
        var state: NetworkConnection<UDP>
        var first: Task<Data, any Error>
        repeat {
            attempt += 1
            local = try freePort(datagram: true)
            state = NetworkConnection(
                to: .hostPort(host: "127.0.0.1", port: .any),
                using: .parameters { UDP() }.localPort(NWEndpoint.Port(rawValue: local)!))
            // The first receive starts it; the socket is bound once it is ready.
            let states = Recorder<NetworkChannel<UDP>.State>()
            state.onStateUpdate { _, value in states.append(value) }
            let receiver = state
            first = Task { try await receiver.receive().content }
            let seen = try await states.wait("ready") { $0.contains(.ready) || $0.contains(.waiting(.posix(.EADDRINUSE))) }
            if seen.contains(.ready) { break }
            first.cancel()
        } while attempt < 3
        let sender = try RawSocket(datagram: true)
        defer { sender.close() }
        try sender.send(to: local, Array("pitch:0;roll:0;".utf8))
        #expect(String(decoding: try await first.value, as: UTF8.self) == "pitch:0;roll:0;")
        try sender.send(to: local, Array("bat:87;".utf8))
        #expect(String(decoding: try await state.receive().content, as: UTF8.self) == "bat:87;")
    }

    @Test("an NWProtocolIP.Metadata in a send's metadata builder marks that datagram alone on the wire: its ECN codepoint, and its service class's DSCP (python reads each TOS byte)", arguments: ["4", "6"])
    func sendMetadataMarksTheWire(family: String) async throws {
        // (name, ECN, service class, the TOS / traffic-class byte the peer must read: DSCP << 2 | ECN)
        let sent: [(String, NWProtocolIP.ECN?, NWParameters.ServiceClass, Int)] = [
            ("ce", .ce, .bestEffort, 3), ("plain", nil, .bestEffort, 0), ("voice-ect1", .ect1, .interactiveVoice, 46 << 2 | 1),
            ("ect0", .ect0, .bestEffort, 2), ("voice", .nonECT, .interactiveVoice, 46 << 2),
        ]
        guard let (peer, port) = try await BehaviourTests.PacketMetadata.reportingPeer(family: family, count: sent.count) else { return }
        defer { peer.stop() }
        let connection = NetworkConnection(
            to: .hostPort(host: family == "6" ? "::1" : "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!), using: { UDP() })
        for (name, ecn, serviceClass, _) in sent {
            guard let ecn else {
                try await connection.send(Data(name.utf8))
                continue
            }
            let ip = NWProtocolIP.Metadata()
            ip.ecn = ecn
            ip.serviceClass = serviceClass
            try await connection.send(Data(name.utf8)) { ip }
        }
        let seen = try await BehaviourTests.PacketMetadata.reported(peer, count: sent.count)
        for (name, _, _, tos) in sent {
            #expect(seen[name] == tos, "\(name): the peer read TOS \(String(describing: seen[name]))")
        }
    }

    @Test("a datagram larger than UDP allows fails its send with EMSGSIZE; the connection keeps working")
    func oversized() async throws {
        let echo = try await RunningListener(try NetworkListener { UDP() }) { connection in
            while true { try await connection.send(try await connection.receive().content) }
        }
        let connection = NetworkConnection(to: echo.endpoint) { UDP() }
        try await connection.send(Data("small".utf8))
        #expect(try await connection.receive().content == Data("small".utf8))
        await #expect(throws: NWError.posix(.EMSGSIZE)) { try await connection.send(Data(count: 70_000)) }
        try await connection.send(Data("again".utf8))
        #expect(try await connection.receive().content == Data("again".utf8))
        _ = await echo.stop()
    }
}
