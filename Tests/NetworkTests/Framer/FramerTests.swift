#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

/// `NWProtocolFramer` end to end: a type-and-length protocol over TCP and TLS between our own
/// connections and listeners, and against a raw peer that splits, joins and lies.
@Suite("Framer.EndToEnd", .serialized)
struct FramerTests {
    /// One received message.
    struct Received: Sendable {
        let type: UInt32?
        let payload: Data?
        let error: NWError?
    }

    static func receiveMessage(_ connection: NWConnection) async throws -> Received {
        let received = Recorder<Received>()
        connection.receiveMessage { data, context, _, error in
            received.append(Received(type: GameFramer.type(of: context), payload: data, error: error))
        }
        return try await received.wait(count: 1, "a message", timeout: 10)[0]
    }

    /// A listener that answers each message with the same payload and its type plus 100.
    static func echoListener(_ parameters: NWParameters, queue: DispatchQueue) async throws -> (NWListener, UInt16) {
        let listener = try NWListener(using: parameters)
        listener.newConnectionHandler = { connection in
            @Sendable func next() {
                connection.receiveMessage { data, context, _, error in
                    guard error == nil, let type = GameFramer.type(of: context) else {
                        connection.cancel()
                        return
                    }
                    connection.send(content: data ?? Data(), contentContext: GameFramer.context(type: type + 100), completion: .contentProcessed { _ in })
                    next()
                }
            }
            connection.start(queue: queue)
            next()
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        return (listener, port)
    }

    static let payloads: [(UInt32, Data)] = [
        (1, Data("hello".utf8)), (2, Data()), (3, Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })),
    ]

    func exchange(client: NWParameters, server: NWParameters) async throws {
        let queue = DispatchQueue(label: "framer-server")
        let (listener, port) = try await Self.echoListener(server, queue: queue)
        defer { listener.cancel() }
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: client)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        for (type, payload) in Self.payloads {
            connection.send(content: payload, contentContext: GameFramer.context(type: type), completion: .contentProcessed { _ in })
        }
        for (type, payload) in Self.payloads {
            let reply = try await Self.receiveMessage(connection)
            #expect(reply.error == nil)
            #expect(reply.type == type + 100, "type of the reply to \(type)")
            #expect((reply.payload ?? Data()) == payload, "payload of the reply to \(type)")
        }
    }

    @Test("a type-and-length framer over TCP: messages and their types both ways between NWConnection and NWListener")
    func overTCP() async throws {
        try await exchange(client: GameFramer.parameters(), server: GameFramer.parameters())
    }

    @Test("the same framer over TLS")
    func overTLS() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let client = GameFramer.parameters(TLSInteropTests.pinned(to: try identity.certificateDER))
        let server = GameFramer.parameters(NWParameters(tls: try identity.serverOptions()))
        try await exchange(client: client, server: server)
    }

    /// A raw TCP peer that accepts one connection and writes `bytes` in pieces of `piece`.
    static func rawServer(writing bytes: [UInt8], piece: Int) throws -> (RawSocket, UInt16) {
        let server = try RawSocket.tcpServer()
        let port = server.localPort
        // Its thread ends by itself: the accept and the last receive have timeouts.
        _ = ThreadTask {
            guard let peer = try? server.accept() else { return }
            try? peer.setNoDelay()
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + piece, bytes.count)
                try? peer.sendAll(Array(bytes[offset..<end]))
                offset = end
                if piece < 16 { usleep(200) }
            }
            // Keep the connection open until the client is done.
            _ = peer.receive(timeout: 10)
        }
        return (server, port)
    }

    @Test("messages split into single bytes, or all in one write, come out the same")
    func splitAndCoalesced() async throws {
        // Small pieces carry small messages (one write each, with a pause, so they arrive apart).
        let small: [(UInt32, Data)] = Array(Self.payloads.prefix(2)) + [(9, Data(repeating: 0x5A, count: 300))]
        for piece in [1, 3, 7, 1 << 20] {
            let payloads = piece < 16 ? small : Self.payloads
            let bytes = payloads.flatMap { GameFramer.encode(type: $0.0, Array($0.1)) }
            let (server, port) = try Self.rawServer(writing: bytes, piece: piece)
            defer { server.close() }
            let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: GameFramer.parameters())
            #expect(await TLSInteropTests.settle(connection) == .ready)
            for (type, payload) in payloads {
                let message = try await Self.receiveMessage(connection)
                #expect(message.type == type && (message.payload ?? Data()) == payload, "piece \(piece), type \(type)")
            }
            connection.cancel()
        }
    }

    @Test("a peer announcing a 4 GiB message fails the connection with EMSGSIZE at once")
    func hugeLengthFails() async throws {
        let (server, port) = try Self.rawServer(writing: [0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3], piece: 64)
        defer { server.close() }
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: GameFramer.parameters())
        let states = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { states.append($0) }
        connection.start(queue: DispatchQueue(label: "framer-huge"))
        let message = try await Self.receiveMessage(connection)
        #expect(message.error == .posix(.EMSGSIZE), "\(String(describing: message.error))")
        try await states.wait("failed", timeout: 10) { $0.contains(.failed(.posix(.EMSGSIZE))) }
        connection.cancel()
    }

    @Test("the framer over UDP: a message is a datagram of header and body; two messages in one datagram both arrive")
    func overUDP() async throws {
        let peer = try RawSocket.udpPeer()
        let port = peer.localPort
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: GameFramer.parameters(.udp))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        connection.send(content: Data("abc".utf8), contentContext: GameFramer.context(type: 5), completion: .contentProcessed { _ in })
        let (datagram, clientPort) = try #require(try await offload { try peer.receiveFrom(timeout: 10) })
        #expect(datagram == GameFramer.encode(type: 5, Array("abc".utf8)), "one message, one datagram: \(datagram)")
        try peer.send(to: clientPort, GameFramer.encode(type: 6, [1]) + GameFramer.encode(type: 7, [2, 2]))
        try peer.send(to: clientPort, GameFramer.encode(type: 8, []))
        var received: [(UInt32?, Data?)] = []
        for _ in 0..<3 {
            let message = try await Self.receiveMessage(connection)
            received.append((message.type, message.payload))
        }
        #expect(received.map(\.0) == [6, 7, 8])
        #expect(received.map { $0.1 ?? Data() } == [Data([1]), Data([2, 2]), Data()])
    }

    @Test("a complete send without content but with a framer message is an empty message; without one it sends nothing")
    func contentlessSends() async throws {
        let peer = try RawSocket.udpPeer()
        let connection = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: peer.localPort)!, using: GameFramer.parameters(.udp))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        let completed = Recorder<String>()
        func done(_ name: String) -> NWConnection.SendCompletion {
            .contentProcessed { completed.append(name + ($0.map { " \($0)" } ?? "")) }
        }
        // A message that is all header (Data and generic content alike); a nil send with no
        // message in its context; then a message with a body, to show nothing came between.
        connection.send(content: nil, contentContext: GameFramer.context(type: 9), completion: done("data"))
        connection.send(content: nil as [UInt8]?, contentContext: GameFramer.context(type: 10), completion: done("generic"))
        connection.send(content: nil, contentContext: .defaultMessage, completion: done("no message"))
        connection.send(content: Data([7]), contentContext: GameFramer.context(type: 11), completion: done("body"))
        var datagrams: [[UInt8]] = []
        for _ in 0..<3 {
            let (datagram, _) = try #require(try await offload { try peer.receiveFrom(timeout: 10) })
            datagrams.append(datagram)
        }
        #expect(datagrams == [GameFramer.encode(type: 9, []), GameFramer.encode(type: 10, []), GameFramer.encode(type: 11, [7])])
        #expect(try await completed.wait(count: 4, "completions", timeout: 10) == ["data", "generic", "no message", "body"])
    }
}
