import Dispatch
import Foundation
import NIOCore
import Network
import PeerSupport
import NetworkSync
import Testing

/// `currentPath`, `metadata(definition:)` and `maximumDatagramSize` give the same, right answer
/// whether they are called on the connection's own event loop (where an answer that waited for
/// the loop could never come) or on any other thread. Handlers run on the user's queue, so the
/// tests reach the loop through the engine flow behind the connection.
@Suite("Connection.AnswersOnAnyThread", .serialized)
struct AnswersOnAnyThreadTests {
    /// What the tests ask a connection.
    struct Answers: Sendable {
        var path: NWPath?
        var tcp: NWProtocolTCP.Metadata?
        var tlsProtocol: String?
        var maximumDatagramSize: Int
    }

    static func answers(_ connection: NWConnection) -> Answers {
        let tls = connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata
        return Answers(
            path: connection.currentPath,
            tcp: connection.metadata(definition: NWProtocolTCP.definition) as? NWProtocolTCP.Metadata,
            tlsProtocol: tls.flatMap {
                sec_protocol_metadata_get_negotiated_protocol($0.securityProtocolMetadata).map { String(cString: $0) }
            },
            maximumDatagramSize: connection.maximumDatagramSize)
    }

    /// The answers on the connection's event loop.
    static func onLoop(_ connection: NWConnection) async throws -> Answers {
        try await connection.flow.eventLoop.submit { answers(connection) }.get()
    }

    /// Carries the answers from the thread that got them to the test, under the project lock:
    /// ThreadSanitizer sees that hand-over, not the continuation's (it reported the answers' fields,
    /// written on one thread and read on the other, as a race).
    final class Handover: Sendable {
        let answers = Lock<Answers?>(nil)
    }

    /// The answers on a thread that is neither the loop nor the test's.
    static func offLoop(_ connection: NWConnection) async -> Answers {
        let handover = Handover()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "off-loop").async {
                let got = answers(connection)
                handover.answers.withLock { $0 = got }
                continuation.resume()
            }
        }
        return handover.answers.withLock { $0 }!
    }

    @Test("TCP: path, buffered bytes and sizes are the same on the loop and off it")
    func tcp() async throws {
        let server = try RawSocket.tcpServer()
        let probe = Probe(port: server.localPort)
        try await probe.startAndWaitReady()
        let peer = try await offload { try server.accept() }
        try peer.sendAll(pattern(1000))
        await pause(milliseconds: 200)
        for answers in [try await Self.onLoop(probe.connection), await Self.offLoop(probe.connection)] {
            let path = try #require(answers.path, "no currentPath")
            #expect(path.status == .satisfied)
            #expect(path.remoteEndpoint == .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: server.localPort)!))
            #expect(path.localEndpoint == .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: peer.remotePort)!))
            #expect(path.usesInterfaceType(.loopback))
            #expect(answers.tcp?.availableReceiveBuffer == 1000)
            #expect(answers.tcp?.availableSendBuffer == 0)
            #expect(answers.tlsProtocol == nil)
            #expect(answers.maximumDatagramSize == Int(UInt32.max))
        }
        // 16 MiB to a peer that does not read: most of it waits, and the loop sees it too.
        probe.connection.send(content: Data(count: 16 << 20), completion: .idempotent)
        await pause(milliseconds: 300)
        let onLoop = try #require(try await Self.onLoop(probe.connection).tcp)
        #expect(onLoop.availableSendBuffer > 1 << 20, "unacknowledged bytes: \(onLoop.availableSendBuffer)")
        let offLoop = try #require(await Self.offLoop(probe.connection).tcp)
        #expect(offLoop.availableSendBuffer > 1 << 20, "unacknowledged bytes: \(offLoop.availableSendBuffer)")
        try await probe.cancelAndWait()
    }

    @Test("UDP: maximumDatagramSize and path on the loop and off it")
    func udp() async throws {
        let peer = try RawSocket.udpPeer()
        let probe = Probe(port: peer.localPort, parameters: .udp)
        try await probe.startAndWaitReady()
        for answers in [try await Self.onLoop(probe.connection), await Self.offLoop(probe.connection)] {
            #expect(answers.maximumDatagramSize == 65_507)
            #expect(answers.tcp == nil)
            #expect(answers.path?.remoteEndpoint == .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: peer.localPort)!))
        }
        try await probe.cancelAndWait()
    }

    @Test("TLS: the negotiated session on the loop and off it, on both ends")
    func tls() async throws {
        let identity = try TLSInteropTests.Identity.make()
        let serverTLS = try identity.serverOptions()
        sec_protocol_options_add_tls_application_protocol(serverTLS.securityProtocolOptions, "echo")
        let listener = try NWListener(using: NWParameters(tls: serverTLS))
        let queue = DispatchQueue(label: "tls-on-loop")
        let accepted = AsyncStream<NWConnection>.makeStream()
        listener.newConnectionHandler = { connection in
            connection.stateUpdateHandler = { if $0 == .ready { accepted.continuation.yield(connection) } }
            connection.start(queue: queue)
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        defer { listener.cancel() }
        let certificate = try identity.certificateDER
        let connection = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: TLSInteropTests.pinned(to: certificate))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        var iterator = accepted.stream.makeAsyncIterator()
        let server = try #require(await iterator.next())
        defer { server.cancel() }
        for end in [connection, server] {
            for answers in [try await Self.onLoop(end), await Self.offLoop(end)] {
                #expect(answers.tlsProtocol == "echo")
                #expect(answers.path?.status == .satisfied)
                #expect(answers.path?.remoteEndpoint != nil)
                #expect(answers.tcp?.availableReceiveBuffer == 0)
            }
        }
    }
}
