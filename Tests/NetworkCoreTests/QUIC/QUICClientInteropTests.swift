#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import NIOPosix
import PeerSupport
import Testing

@testable import NetworkCore

/// The QUIC engine's client (ngtcp2 + GnuTLS, `QUICConnectionBinding` on a UDP channel through
/// `QUICDatagramHandler`) against aioquic's server (Tests/PeerScripts/quic_peer.py) on
/// loopback: handshake, certificate checks, stream echo, streams the server opens, resets and
/// the ways a connection ends.
@Suite("QUIC.ClientInterop", .serialized)
struct QUICClientInteropTests {
    typealias Peer = AioquicServer

    static func startPeer(retry: Bool = false) async throws -> Peer? {
        try await AioquicServer.start(retry: retry)
    }

    /// What a client saw, in order, in a form tests compare.
    enum Seen: Sendable, Equatable {
        case established(alpn: String?)
        case verificationNeeded
        case streamOpened(Int64)
        case data(Int64, [UInt8], fin: Bool)
        case reset(Int64, UInt64)
        case streamClosed(Int64, UInt64?)
        case closed(FlowError?)
    }

    /// One client connection to 127.0.0.1:`port`, its events recorded.
    final class Client: @unchecked Sendable {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let seen = Recorder<Seen>()
        var channel: Channel?
        /// Set on the loop once the channel is connected; used on the loop only.
        var handler: NIOLoopBound<QUICDatagramHandler>?
        /// Answers `.verificationNeeded` (the settings' verify block, run on the loop).
        let verify: (([[UInt8]]) -> Bool)?

        init(
            port: Int, settings: FlowTLSConfiguration, limits: QUICSettings = .init(),
            verify: (([[UInt8]]) -> Bool)? = nil
        ) async throws {
            self.verify = verify
            // Connected first, so the handler starts with both addresses known.
            let channel = try await DatagramBootstrap(group: loop).connect(host: "127.0.0.1", port: port).get()
            self.channel = channel
            try await loop.submit {
                let handler = QUICDatagramHandler(binding: { local, remote, now throws(FlowError) in
                    try QUICConnectionBinding(
                        role: .client(serverName: "localhost"), settings: settings, limits: limits, local: local, remote: remote,
                        now: now)
                }, onEvent: { [unowned self] event in self.record(event) })
                self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
                try channel.pipeline.syncOperations.addHandler(handler)
            }.get()
        }

        private func record(_ event: QUICEvent) {
            switch event {
            case .established(let facts): seen.append(.established(alpn: facts.negotiatedProtocol))
            case .verificationNeeded(let chain):
                seen.append(.verificationNeeded)
                handler?.value.verified(verify?(chain) ?? false)
            case .streamOpened(let id): seen.append(.streamOpened(id))
            case .streamData(let id, let bytes, let isFinal):
                seen.append(.data(id, Array(bytes.readableBytesView), fin: isFinal))
                handler?.value.consumed(bytes.readableBytes, on: id)
            case .streamReset(let id, let code): seen.append(.reset(id, code))
            case .streamClosed(let id, let code): seen.append(.streamClosed(id, code))
            case .streamsAvailable, .datagram: break
            case .closed(let error): seen.append(.closed(error))
            }
        }

        func established(timeout: Double = 10) async throws -> Seen {
            try await seen.wait("the handshake's end", timeout: timeout) { values in
                values.contains { if case .established = $0 { return true }; if case .closed = $0 { return true }; return false }
            }.first { if case .established = $0 { return true }; if case .closed = $0 { return true }; return false }!
        }

        /// Opens a stream and sends `bytes` on it (and FIN with `fin`).
        func send(_ bytes: [UInt8], fin: Bool) async throws -> Int64 {
            try await loop.submit {
                let handler = try #require(self.handler?.value)
                let stream = try #require(handler.openStream())
                handler.send(ByteBuffer(bytes: bytes), on: stream, fin: fin)
                return stream
            }.get()
        }

        /// Everything received on `stream` until its FIN.
        func received(on stream: Int64, timeout: Double = 10) async throws -> [UInt8] {
            let values = try await seen.wait("stream \(stream)'s end", timeout: timeout) { values in
                values.contains { if case .data(stream, _, true) = $0 { return true }; return false }
            }
            return values.flatMap { value -> [UInt8] in
                if case .data(stream, let bytes, _) = value { return bytes }
                return []
            }
        }

        func closed(timeout: Double = 10) async throws -> FlowError? {
            let values = try await seen.wait("the connection's end", timeout: timeout) { values in
                values.contains { if case .closed = $0 { return true }; return false }
            }
            for case .closed(let error) in values { return error }
            return nil
        }

        func close(applicationError: UInt64 = 0) async throws {
            try await loop.submit { self.handler?.value.close(applicationError: applicationError) }.get()
        }
    }

    /// Client settings that offer ALPN "echo" and trust exactly `certificate` (a verify block).
    static func pinned(_ certificate: [UInt8]) -> FlowTLSConfiguration {
        var settings = FlowTLSConfiguration()
        settings.applicationProtocols = ["echo"]
        settings.verify = { chain, complete in complete(chain.first == certificate) }
        return settings
    }

    static func pinnedClient(_ peer: Peer) async throws -> Client {
        try await Client(port: peer.port, settings: pinned(peer.certificate), verify: { $0.first == peer.certificate })
    }

    @Test("handshake with ALPN, a pinned certificate, one stream echoed with its end, then an orderly close")
    func streamEcho() async throws {
        guard let peer = try await Self.startPeer() else { return }
        defer { peer.stop() }
        let client = try await Self.pinnedClient(peer)
        let established = try await client.established()
        #expect(established == .established(alpn: "echo"), "\(client.seen.values)")
        let message = Array("hello over QUIC".utf8)
        let stream = try await client.send(message, fin: true)
        #expect(stream == 0, "a client's first bidirectional stream is 0")
        #expect(try await client.received(on: stream) == message)
        try await client.close()
        #expect(try await client.closed() == nil)
        try await peer.process.waitForOutput(containing: "closed 0")
    }

    @Test("many concurrent streams and a 4 MiB stream arrive whole and in order")
    func concurrentStreamsAndBulk() async throws {
        guard let peer = try await Self.startPeer() else { return }
        defer { peer.stop() }
        let client = try await Self.pinnedClient(peer)
        _ = try await client.established()
        var expected: [Int64: [UInt8]] = [:]
        for index in 0..<20 {
            let bytes = Array("stream \(index) ".utf8) + [UInt8](repeating: UInt8(index), count: 1_000 * index)
            expected[try await client.send(bytes, fin: true)] = bytes
        }
        let bulk = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let bulkStream = try await client.send(bulk, fin: true)
        for (stream, bytes) in expected {
            #expect(try await client.received(on: stream) == bytes, "stream \(stream)")
        }
        let echoed = try await client.received(on: bulkStream, timeout: 30)
        #expect(echoed.count == bulk.count)
        #expect(echoed == bulk)
        try await client.close()
        #expect(try await client.closed() == nil)
    }

    @Test("a stream the server opens arrives with its data; a reset from the server arrives with its code")
    func serverStreamsAndResets() async throws {
        guard let peer = try await Self.startPeer() else { return }
        defer { peer.stop() }
        let client = try await Self.pinnedClient(peer)
        _ = try await client.established()
        let asking = try await client.send(Array("push:5000".utf8), fin: true)
        #expect(try await client.received(on: asking) == Array("pushed".utf8))
        // The server's first bidirectional stream is 1.
        #expect(try await client.received(on: 1) == [UInt8](repeating: UInt8(ascii: "p"), count: 5000))
        #expect(client.seen.values.contains(.streamOpened(1)))
        let resetting = try await client.send(Array("reset:77".utf8), fin: false)
        _ = try await client.seen.wait("the reset") { $0.contains(.reset(resetting, 77)) }
        try await client.close()
    }

    @Test("the server closing with an application error ends the connection with ECONNABORTED")
    func serverCloses() async throws {
        guard let peer = try await Self.startPeer() else { return }
        defer { peer.stop() }
        let client = try await Self.pinnedClient(peer)
        _ = try await client.established()
        _ = try await client.send(Array("close:5".utf8), fin: false)
        #expect(try await client.closed() == .posix(ECONNABORTED))
    }

    @Test("Retry: the handshake follows the server's Retry and completes")
    func retry() async throws {
        guard let peer = try await Self.startPeer(retry: true) else { return }
        defer { peer.stop() }
        let client = try await Self.pinnedClient(peer)
        let established = try await client.established()
        #expect(established == .established(alpn: "echo"), "\(client.seen.values)")
        let stream = try await client.send(Array("after retry".utf8), fin: true)
        #expect(try await client.received(on: stream) == Array("after retry".utf8))
        try await client.close()
    }

    @Test("by default the system trust store decides: a self-signed server is refused with a TLS error, and the server hears bad_certificate")
    func untrustedCertificate() async throws {
        guard let peer = try await Self.startPeer() else { return }
        defer { peer.stop() }
        var settings = FlowTLSConfiguration()
        settings.applicationProtocols = ["echo"]
        let client = try await Client(port: peer.port, settings: settings)
        let error = try await client.closed()
        #expect(error == .tls(TLSStatus.certificateChainInvalid), "got \(String(describing: error))")
        #expect(!client.seen.values.contains { if case .established = $0 { return true }; return false })
        // CRYPTO_ERROR (0x100) + bad_certificate (42).
        try await peer.process.waitForOutput(containing: "closed 298")
    }

    @Test("a verify block that says no fails the connection with errSSLBadCert")
    func verifyBlockRefuses() async throws {
        guard let peer = try await Self.startPeer() else { return }
        defer { peer.stop() }
        var settings = Self.pinned(peer.certificate)
        settings.verify = { _, complete in complete(false) }
        let client = try await Client(port: peer.port, settings: settings, verify: { _ in false })
        #expect(try await client.closed() == .tls(TLSStatus.badCertificate))
    }

    @Test("no common application protocol fails the handshake with a TLS error")
    func noCommonALPN() async throws {
        guard let peer = try await Self.startPeer() else { return }
        defer { peer.stop() }
        var settings = Self.pinned(peer.certificate)
        settings.applicationProtocols = ["h3"]
        let client = try await Client(port: peer.port, settings: settings)
        let error = try await client.closed()
        guard case .tls = error else {
            Issue.record("expected a TLS error, got \(String(describing: error))")
            return
        }
    }

    @Test("a server that never answers: the handshake times out with ETIMEDOUT")
    func silentServer() async throws {
        // A bound UDP socket that reads and drops everything.
        let sink = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        defer { sink.close(promise: nil) }
        var limits = QUICSettings()
        limits.handshakeTimeout = .milliseconds(800)
        let started = ContinuousClock.now
        let client = try await Client(port: try #require(sink.localAddress?.port), settings: Self.pinned([]), limits: limits)
        #expect(try await client.closed(timeout: 10) == .posix(ETIMEDOUT))
        #expect(ContinuousClock.now - started >= .milliseconds(700))
    }
}
