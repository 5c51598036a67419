#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

/// `NWProtocolFramer` over datagrams beyond an outbound UDP connection: on a UDP listener's
/// peers (each with its own framer instance) and over DTLS, outbound and on a DTLS listener,
/// against our own peers and independent ones (a raw UDP socket, gnutls-serv's DTLS echo).
@Suite("Framer.Datagrams", .serialized)
struct FramerDatagramTests {
    /// What a framed listener saw of one message: which connection, which framer instance, the
    /// instance's number for it, and its type.
    struct Seen: Sendable {
        let connection: Int
        let instance: ObjectIdentifier
        let index: Int
        let type: UInt32
    }

    /// `base` with the game framer, bound to loopback (a listener) and nowhere else.
    static func listenerParameters(_ base: NWParameters) -> NWParameters {
        let parameters = GameFramer.parameters(base)
        parameters.requiredLocalEndpoint = .hostPort(host: "127.0.0.1", port: .any)
        return parameters
    }

    /// A framed listener that answers each message with its payload and its type plus 100, and
    /// records what it saw.
    static func echoListener(_ parameters: NWParameters, seen: Recorder<Seen>) async throws -> (NWListener, UInt16) {
        let queue = DispatchQueue(label: "framer-datagram-listener")
        let listener = try NWListener(using: parameters)
        let connections = Recorder<NWConnection>()
        listener.newConnectionHandler = { connection in
            connections.append(connection)
            let number = connections.count
            @Sendable func next() {
                connection.receiveMessage { data, context, _, error in
                    guard error == nil, let type = GameFramer.type(of: context), let origin = GameFramer.origin(of: context) else { return }
                    seen.append(Seen(connection: number, instance: origin.instance, index: origin.index, type: type))
                    connection.send(
                        content: data ?? Data(), contentContext: GameFramer.context(type: type + 100),
                        completion: .contentProcessed { _ in })
                    next()
                }
            }
            connection.stateUpdateHandler = { if $0 == .ready { next() } }
            connection.start(queue: queue)
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        return (listener, port)
    }

    /// Two framed clients against a framed listener, messages interleaved: every reply arrives
    /// with its type, and the listener's framer instances are one per peer, each numbering only
    /// its own peer's messages.
    func twoPeers(client: () throws -> NWParameters, server: NWParameters) async throws {
        let seen = Recorder<Seen>()
        let (listener, port) = try await Self.echoListener(server, seen: seen)
        defer { listener.cancel() }
        let first = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: try client())
        let second = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: try client())
        #expect(await TLSInteropTests.settle(first) == .ready)
        #expect(await TLSInteropTests.settle(second) == .ready)
        defer {
            first.cancel()
            second.cancel()
        }
        let big = Data((0..<1_000).map { UInt8(truncatingIfNeeded: $0) })
        for round in 0..<3 {
            for (index, connection) in [first, second].enumerated() {
                let type = UInt32(10 * (index + 1) + round)
                let payload = round == 1 ? big : Data("peer \(index) round \(round)".utf8)
                connection.send(content: payload, contentContext: GameFramer.context(type: type), completion: .contentProcessed { _ in })
                let reply = try await FramerTests.receiveMessage(connection)
                #expect(reply.error == nil)
                #expect(reply.type == type + 100, "reply to \(type)")
                #expect(reply.payload ?? Data() == payload, "payload of the reply to \(type)")
            }
        }
        let all = try await seen.wait("six messages") { $0.count == 6 }
        let byConnection = Dictionary(grouping: all, by: \.connection)
        #expect(byConnection.count == 2, "two peers")
        for (_, messages) in byConnection {
            #expect(messages.map(\.index) == [0, 1, 2], "each framer numbers only its own peer's messages")
            #expect(Set(messages.map(\.instance)).count == 1, "one framer instance per peer")
        }
        #expect(Set(all.map(\.instance)).count == 2, "two peers, two framer instances")
    }

    @Test("framed UDP clients and a framed UDP listener: one framer per peer, replies with their types")
    func udpListener() async throws {
        try await twoPeers(client: { GameFramer.parameters(.udp) }, server: Self.listenerParameters(.udp))
    }

    @Test("framed DTLS clients and a framed DTLS listener: one framer per peer over each peer's DTLS session")
    func dtlsListener() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let certificate = try identity.certificateDER
        try await twoPeers(
            client: { GameFramer.parameters(DTLSInteropTests.pinned(to: certificate)) },
            server: Self.listenerParameters(try DTLSInteropTests.listenerParameters(identity)))
    }

    /// `base` with two game framers, one over the other.
    static func stacked(_ base: NWParameters) -> NWParameters {
        GameFramer.parameters(GameFramer.parameters(base))
    }

    @Test("two framers stacked, over TCP and on a UDP listener: the upper one's messages travel inside the lower one's", arguments: [true, false])
    func stackedFramers(udp: Bool) async throws {
        let seen = Recorder<Seen>()
        let server = Self.stacked(udp ? .udp : .tcp)
        server.requiredLocalEndpoint = .hostPort(host: "127.0.0.1", port: .any)
        let (listener, port) = try await Self.echoListener(server, seen: seen)
        defer { listener.cancel() }
        let connection = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.stacked(udp ? .udp : .tcp))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        for type in [UInt32(1), 2, 3] {
            let payload = Data("stacked \(type)".utf8)
            connection.send(content: payload, contentContext: GameFramer.context(type: type), completion: .contentProcessed { _ in })
            let reply = try await FramerTests.receiveMessage(connection)
            #expect(reply.error == nil)
            #expect(reply.type == type + 100)
            #expect(reply.payload == payload)
        }
        #expect(try await seen.wait("three messages") { $0.count == 3 }.map(\.type) == [1, 2, 3])
    }

    @Test("a raw UDP socket against a framed UDP listener: each message is one datagram of header and body; two in one datagram both arrive")
    func rawPeerToUDPListener() async throws {
        let seen = Recorder<Seen>()
        let (listener, port) = try await Self.echoListener(Self.listenerParameters(.udp), seen: seen)
        defer { listener.cancel() }
        let peer = try RawSocket.udpPeer()
        defer { peer.close() }
        try peer.send(to: port, GameFramer.encode(type: 1, Array("one".utf8)))
        let first = try #require(try await offload { try peer.receiveFrom(timeout: 10) })
        #expect(first.bytes == GameFramer.encode(type: 101, Array("one".utf8)), "one reply, one datagram: \(first.bytes)")
        try peer.send(to: port, GameFramer.encode(type: 2, [2]) + GameFramer.encode(type: 3, []))
        let second = try #require(try await offload { try peer.receiveFrom(timeout: 10) })
        let third = try #require(try await offload { try peer.receiveFrom(timeout: 10) })
        #expect(second.bytes == GameFramer.encode(type: 102, [2]))
        #expect(third.bytes == GameFramer.encode(type: 103, []))
        let all = try await seen.wait("three messages") { $0.count == 3 }
        #expect(all.map(\.index) == [0, 1, 2])
    }

    @Test("openssl s_client -dtls1_2 against a framed DTLS listener: its record, a framed message, is answered in kind")
    func openSSLClientToDTLSListener() async throws {
        guard let openssl = TLSInteropTests.openssl() else { return }
        let identity = try TLSInteropTests.Identity.make()
        let seen = Recorder<Seen>()
        let (listener, port) = try await Self.echoListener(
            Self.listenerParameters(try DTLSInteropTests.listenerParameters(identity)), seen: seen)
        defer { listener.cancel() }
        // s_client sends what it reads from its input as one record: one framed message.
        let message = Data(GameFramer.encode(type: 4, Array("framed over dtls from openssl\n".utf8)))
        let client = try PeerProcess(openssl, ["s_client", "-dtls1_2", "-connect", "127.0.0.1:\(port)", "-quiet"], input: message)
        defer { client.stop() }
        try await client.waitForOutput(containing: "framed over dtls from openssl")
        #expect(try await seen.wait("the message") { !$0.isEmpty }.map(\.type) == [4])
        let output = client.standardOutput
        let header = Data(GameFramer.encode(type: 104, Array("framed over dtls from openssl\n".utf8)).prefix(8))
        #expect(output.range(of: header) != nil, "the answer's header, type 104")
    }

    @Test("a framed DTLS client against gnutls-serv's DTLS echo: the framed message comes back whole, type and all")
    func dtlsClientAgainstGnuTLS() async throws {
        let identity = try TLSInteropTests.Identity.make()
        guard let (server, port) = try await DTLSInteropTests.startGnuTLSEcho(identity) else { return }
        defer { server.stop() }
        let parameters = GameFramer.parameters(DTLSInteropTests.pinned(to: try identity.certificateDER))
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: parameters)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        // (gnutls-serv echoes at most 128 bytes per record.)
        for (type, text) in [(UInt32(7), "framed over dtls"), (8, ""), (9, String(repeating: "z", count: 100))] {
            connection.send(content: Data(text.utf8), contentContext: GameFramer.context(type: type), completion: .contentProcessed { _ in })
            let echo = try await FramerTests.receiveMessage(connection)
            #expect(echo.error == nil)
            #expect(echo.type == type, "the echo of type \(type)")
            #expect(echo.payload ?? Data() == Data(text.utf8))
        }
    }
}
