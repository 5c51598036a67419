import Foundation
import Network
import PeerSupport
import Testing

/// A framer's own handshake gates `ready` (`.willMarkReady`, `markReady`), and `markFailed`
/// fails the connection with the framer's error; against a raw TCP peer that plays the other
/// side by hand.
@Suite("Framer.Handshake", .serialized)
struct FramerHandshakeTests {
    @Test("ready comes only after the framer's handshake, and data flows after it")
    func readyAfterHandshake() async throws {
        let server = try RawSocket.tcpServer()
        let port = server.localPort
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: HandshakeFramer.parameters())
        let states = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { states.append($0) }
        connection.start(queue: DispatchQueue(label: "handshake-client"))
        defer { connection.cancel() }
        let peer = try await offload { try server.accept() }
        let hello = try await offload { try peer.receiveExactly(5) }
        #expect(hello == Array("HELLO".utf8), "the framer wrote its greeting at start")
        try await Task.sleep(for: .milliseconds(200))
        #expect(!states.values.contains(.ready), "not ready before the peer answered: \(states.values)")
        try peer.sendAll(Array("HELLO".utf8))
        try await states.wait("ready", timeout: 10) { $0.contains(.ready) }
        // After the handshake, bytes pass both ways.
        connection.send(content: Data("ping".utf8), completion: .contentProcessed { _ in })
        let ping = try await offload { try peer.receiveExactly(4) }
        #expect(ping == Array("ping".utf8))
        try peer.sendAll(Array("pong".utf8))
        let received = Recorder<Data>()
        connection.receiveMessage { data, _, _, _ in received.append(data ?? Data()) }
        #expect(try await received.wait(count: 1, "pong", timeout: 10) == [Data("pong".utf8)])
    }

    @Test("a message that comes with the handshake's answer, in the same read, is not lost, and follows ready")
    func messageWithTheHandshake() async throws {
        let server = try RawSocket.tcpServer()
        let port = server.localPort
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: HandshakeFramer.parameters())
        // Both callbacks run on the connection's queue, in the order the connection delivers.
        let events = Recorder<String>()
        connection.stateUpdateHandler = { if $0 == .ready { events.append("ready") } }
        // Issued before ready: it completes once the message is there.
        connection.receiveMessage { data, _, _, _ in
            events.append("message " + String(decoding: data ?? Data(), as: UTF8.self))
        }
        connection.start(queue: DispatchQueue(label: "handshake-early-message"))
        defer { connection.cancel() }
        let peer = try await offload { try server.accept() }
        _ = try await offload { try peer.receiveExactly(5) }
        // The answer and a first message in one segment: the framer marks the connection ready
        // and delivers the message in the same read.
        try peer.sendAll(Array("HELLOearly".utf8))
        let seen = try await events.wait(count: 2, "ready and the message", timeout: 10)
        #expect(seen == ["ready", "message early"])
    }

    @Test("markFailed before ready fails the connection with the framer's error")
    func markFailedFails() async throws {
        let server = try RawSocket.tcpServer()
        let port = server.localPort
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: HandshakeFramer.parameters())
        let states = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { states.append($0) }
        connection.start(queue: DispatchQueue(label: "handshake-refused"))
        defer { connection.cancel() }
        let peer = try await offload { try server.accept() }
        _ = try await offload { try peer.receiveExactly(5) }
        try peer.sendAll(Array("NOPE".utf8))
        try await states.wait("failed", timeout: 10) { states in
            states.contains { if case .failed = $0 { true } else { false } }
        }
        #expect(states.values.contains(.failed(.posix(.ECONNREFUSED))), "\(states.values)")
        #expect(!states.values.contains(.ready))
    }

    @Test("a framer whose handshake never gets its answer is bounded by connectionTimeout")
    func stalledHandshakeTimesOut() async throws {
        let server = try RawSocket.tcpServer()
        let port = server.localPort
        let parameters = HandshakeFramer.parameters()
        (parameters.defaultProtocolStack.transportProtocol as? NWProtocolTCP.Options)?.connectionTimeout = 1
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: parameters)
        let states = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { states.append($0) }
        let started = Date()
        connection.start(queue: DispatchQueue(label: "handshake-stalled"))
        defer { connection.cancel() }
        let peer = try await offload { try server.accept() }
        _ = try await offload { try peer.receiveExactly(5) }
        // The peer never answers.
        try await states.wait("waiting", timeout: 10) { states in
            states.contains { if case .waiting = $0 { true } else { false } }
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(states.values.contains(.waiting(.posix(.ETIMEDOUT))), "\(states.values)")
        #expect(elapsed >= 0.9 && elapsed < 5, "after the 1 s timeout: \(elapsed) s")
    }
}
