import NIOCore
import NIOPosix
import PeerSupport
import Synchronization
import Testing

@testable import NetworkCore

/// The DTLS session on its own: two real GnuTLS sessions wired back to back on one event loop
/// (their datagrams handed across directly), so loss, garbage and timeouts can be arranged.
@Suite("DTLS.Session")
struct DTLSSessionTests {
    /// Two sessions whose datagrams reach each other unless `drop` says otherwise.
    final class Pair: @unchecked Sendable {
        let loop: EventLoop
        var client: GnuTLSSession?
        var server: GnuTLSSession?
        var drop: (_ toServer: Bool, _ datagram: ByteBuffer) -> Bool = { _, _ in false }
        var clientMessages: [String] = []
        var serverMessages: [String] = []
        var clientEnd: GnuTLSSession.End?
        /// Every datagram the client sent, in order.
        var sentToServer: [ByteBuffer] = []
        var serverEnd: GnuTLSSession.End?

        init(loop: EventLoop, client settings: FlowTLSConfiguration, server serverSettings: FlowTLSConfiguration,
             timeout: TimeAmount = GnuTLSSession.defaultHandshakeTimeout) throws {
            self.loop = loop
            client = try GnuTLSSession(
                role: .client(serverName: nil), settings: settings, eventLoop: loop, handshakeTimeout: timeout,
                write: { [unowned self] datagram, promise in
                    promise?.succeed()
                    self.sentToServer.append(datagram)
                    guard !self.drop(true, datagram) else { return }
                    loop.execute { self.deliver(datagram, toServer: true) }
                }, flush: {})
            server = try GnuTLSSession(
                role: .server, settings: serverSettings, eventLoop: loop, handshakeTimeout: timeout,
                write: { [unowned self] datagram, promise in
                    promise?.succeed()
                    guard !self.drop(false, datagram) else { return }
                    loop.execute { self.deliver(datagram, toServer: false) }
                }, flush: {})
        }

        func deliver(_ datagram: ByteBuffer, toServer: Bool) {
            if toServer, let server {
                let received = server.receive(datagram)
                serverMessages += received.messages.map { String(buffer: $0) }
                if let end = received.end { serverEnd = end }
            } else if let client {
                let received = client.receive(datagram)
                clientMessages += received.messages.map { String(buffer: $0) }
                if let end = received.end { clientEnd = end }
            }
        }

        /// Runs both handshakes; returns the client's and the server's outcome.
        func handshake() async throws -> (Result<TLSSessionFacts, FlowError>, Result<TLSSessionFacts, FlowError>) {
            let clientDone = loop.makePromise(of: Result<TLSSessionFacts, FlowError>.self)
            let serverDone = loop.makePromise(of: Result<TLSSessionFacts, FlowError>.self)
            try await loop.submit {
                self.server?.startHandshake { serverDone.succeed($0) }
                self.client?.startHandshake { clientDone.succeed($0) }
            }.get()
            return (try await clientDone.futureResult.get(), try await serverDone.futureResult.get())
        }
    }

    static func psk(_ key: [UInt8] = Array(repeating: 7, count: 32)) -> FlowTLSConfiguration {
        var settings = FlowTLSConfiguration()
        settings.preSharedKeys = [(key: key, identity: "unit")]
        settings.cipherSuites = [0x00A8]
        return settings
    }

    @Test("PSK sessions agree on TLS_PSK_WITH_AES_128_GCM_SHA256 and carry messages both ways")
    func pskRoundTrip() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let pair = try Pair(loop: loop, client: Self.psk(), server: Self.psk())
        let (client, server) = try await pair.handshake()
        let facts = try client.get()
        _ = try server.get()
        #expect(facts.cipherSuite == 0x00A8)
        #expect(facts.version == 0xfefd)
        try await loop.submit {
            pair.client?.send(ByteBuffer(string: "to server"), promise: nil)
            pair.server?.send(ByteBuffer(string: "to client"), promise: nil)
        }.get()
        try await loop.submit {}.get()
        #expect(try await loop.submit { pair.serverMessages }.get() == ["to server"])
        #expect(try await loop.submit { pair.clientMessages }.get() == ["to client"])
    }

    @Test("garbage, truncated and replayed datagrams are dropped without ending the session")
    func hostileDatagrams() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let pair = try Pair(loop: loop, client: Self.psk(), server: Self.psk())
        _ = try await pair.handshake()
        try await loop.submit {
            pair.client?.send(ByteBuffer(string: "genuine"), promise: nil)
        }.get()
        try await loop.submit {
            var generator = SystemRandomNumberGenerator()
            for size in [0, 1, 13, 14, 100, 1_500] {
                let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
                pair.deliver(ByteBuffer(bytes: bytes), toServer: true)
            }
            // A replay of the genuine record, and a copy with one bit flipped.
            if var last = pair.sentToServer.last {
                pair.deliver(last, toServer: true)
                let index = last.readerIndex + last.readableBytes - 1
                last.setInteger((last.getInteger(at: index, as: UInt8.self) ?? 0) ^ 1, at: index)
                pair.deliver(last, toServer: true)
            }
            pair.client?.send(ByteBuffer(string: "after"), promise: nil)
        }.get()
        try await loop.submit {}.get()
        #expect(try await loop.submit { pair.serverMessages }.get() == ["genuine", "after"])
        let end = try await loop.submit { pair.serverEnd.map { "\($0)" } }.get()
        #expect(end == nil)
    }

    @Test("a handshake whose flights are all lost fails with ETIMEDOUT at the handshake timeout")
    func lostFlightsTimeOut() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let pair = try Pair(loop: loop, client: Self.psk(), server: Self.psk(), timeout: .milliseconds(1_500))
        pair.drop = { _, _ in true }
        let started = ContinuousClock.now
        // (The end is timed on the loop, where the handshake ends: the test's task may resume
        // seconds later on a loaded machine, whose cooperative threads other tests hold.)
        let done = loop.makePromise(of: (Result<TLSSessionFacts, FlowError>, Duration).self)
        try await loop.submit { pair.client?.startHandshake { done.succeed(($0, ContinuousClock.now - started)) } }.get()
        let (client, elapsed) = try await done.futureResult.get()
        guard case .failure(.posix(let code)) = client else {
            Issue.record("expected a POSIX failure, got \(client)")
            return
        }
        #expect(code == ETIMEDOUT)
        // At the timeout, not at GnuTLS's next retransmission after it (3 s here).
        // (Upper bound loose: a loaded machine can stall the loop for seconds.)
        #expect(elapsed >= .milliseconds(1_450) && elapsed < SanitizerSlowdown.duration(.seconds(5)), "took \(elapsed)")
    }

    @Test("a wrong key on one side never completes the handshake")
    func wrongKey() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let pair = try Pair(
            loop: loop, client: Self.psk(Array(repeating: 1, count: 32)), server: Self.psk(), timeout: .milliseconds(1_500))
        let (client, _) = try await pair.handshake()
        guard case .failure = client else {
            Issue.record("a wrong key must not succeed")
            return
        }
    }

    @Test("close sends close_notify: the peer sees an orderly end")
    func closeNotify() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let pair = try Pair(loop: loop, client: Self.psk(), server: Self.psk())
        _ = try await pair.handshake()
        try await loop.submit { pair.client?.close() }.get()
        try await loop.submit {}.get()
        let end = try await loop.submit { pair.serverEnd }.get()
        guard case .closed = end else {
            Issue.record("expected an orderly end, got \(String(describing: end))")
            return
        }
    }
}
