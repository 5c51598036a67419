#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// `NWConnection` over QUIC (`NWParameters.quic(alpn:)`, one bidirectional stream) against
/// aioquic's server (`Tests/PeerScripts/quic_peer.py`) on loopback.
@Suite("Connection.QUIC", .serialized)
struct QUICConnectionTests {
    /// QUIC parameters offering ALPN "echo" whose verify block trusts exactly `certificate`.
    static func pinned(_ certificate: [UInt8]) -> NWParameters {
        let options = NWProtocolQUIC.Options(alpn: ["echo"])
        sec_protocol_options_set_verify_block(options.securityProtocolOptions, { _, trust, complete in
            complete(trust.certificates.first?.derData == Data(certificate))
        }, DispatchQueue(label: "verify"))
        return NWParameters(quic: options)
    }

    static func connection(to server: AioquicServer, using parameters: NWParameters) -> NWConnection {
        NWConnection(host: "localhost", port: NWEndpoint.Port(rawValue: UInt16(server.port))!, using: parameters)
    }

    /// Connects to aioquic's echo server `server` at `host` (its certificate pinned), sends
    /// `size` seeded random bytes in 256 KiB sends with the stream's FIN after the last, and
    /// checks they all come back, in order, with the FIN. Returns the connection (to cancel)
    /// and the seconds from the first send to the echo's end.
    static func echoWhole(size: Int, seed: UInt64, host: String, server: AioquicServer) async -> (NWConnection, Double) {
        let connection = NWConnection(
            host: NWEndpoint.Host(host), port: NWEndpoint.Port(rawValue: UInt16(server.port))!, using: pinned(server.certificate))
        return (connection, await echoWhole(size: size, seed: seed, over: connection))
    }

    /// `size` (a multiple of 8) bytes from `seed`'s generator: the same bytes for the same seed.
    static func seededPayload(size: Int, seed: UInt64) -> Data {
        var generator = SeededGenerator(state: seed)
        var payload = Data(count: size)
        payload.withUnsafeMutableBytes { bytes in
            for index in stride(from: 0, to: bytes.count, by: 8) { bytes.storeBytes(of: generator.next(), toByteOffset: index, as: UInt64.self) }
        }
        return payload
    }

    /// Starts `connection` (to any QUIC echo server), then as above; the seconds the echo took.
    static func echoWhole(size: Int, seed: UInt64, over connection: NWConnection) async -> Double {
        #expect(await TLSInteropTests.settle(connection) == .ready)
        let payload = seededPayload(size: size, seed: seed)
        let started = Date()
        let chunk = 256 << 10
        for offset in stride(from: 0, to: payload.count, by: chunk) {
            let end = min(offset + chunk, payload.count)
            connection.send(content: Data(payload[offset..<end]), contentContext: end == payload.count ? .finalMessage : .defaultMessage,
                            completion: .contentProcessed { _ in })
        }
        let (echoed, ended) = await receiveToEnd(connection)
        let seconds = Date().timeIntervalSince(started)
        #expect(echoed.count == payload.count, "ended: \(ended), state: \(connection.state)")
        // (Compared first: a failed #expect on two values this large would diff them for minutes.)
        let unchanged = echoed == payload
        #expect(unchanged, "the bytes came back in order, unchanged")
        #expect(ended)
        return seconds
    }

    /// Receives until the stream's end; the bytes, and whether the end came.
    static func receiveToEnd(_ connection: NWConnection) async -> (Data, Bool) {
        var collected = Data()
        while true {
            let (data, isComplete, error) = await withCheckedContinuation { continuation in
                connection.receive(minimumIncompleteLength: 1, maximumLength: 1 << 20) { data, _, isComplete, error in
                    continuation.resume(returning: (data, isComplete, error))
                }
            }
            if let data { collected += data }
            if isComplete { return (collected, true) }
            if error != nil { return (collected, false) }
        }
    }

    static func waitUntilCancelled(_ connection: NWConnection) async throws {
        let cancelled = Recorder<Bool>()
        connection.stateUpdateHandler = { if $0 == .cancelled { cancelled.append(true) } }
        connection.cancel()
        _ = try await cancelled.wait("cancelled") { !$0.isEmpty }
    }

    @Test("ready with ALPN on stream 0; bytes echoed; a final send ends the stream both ways; cancel closes the QUIC connection without an error")
    func echo() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = Self.connection(to: server, using: Self.pinned(server.certificate))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        let metadata = connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata
        #expect(metadata?.negotiatedALPN == "echo")
        #expect(metadata?.streamIdentifier == 0)
        #expect(await TLSInteropTests.exchange(connection, "hello over quic") == "hello over quic")
        connection.send(content: Data("bye".utf8), contentContext: .finalMessage, completion: .contentProcessed { _ in })
        let (rest, ended) = await Self.receiveToEnd(connection)
        #expect(String(decoding: rest, as: UTF8.self) == "bye")
        #expect(ended, "the echo's FIN completes the receive side")
        try await Self.waitUntilCancelled(connection)
        try await server.process.waitForOutput(containing: "closed 0")
    }

    @Test("the TLS 1.3 suite the options name is the one negotiated with aioquic (the interop runner's chacha20 case, and AES-256-GCM); TLS 1.2 suites named alone leave the defaults", arguments: [
        ([tls_ciphersuite_t.CHACHA20_POLY1305_SHA256], tls_ciphersuite_t.CHACHA20_POLY1305_SHA256),
        ([.AES_256_GCM_SHA384], .AES_256_GCM_SHA384),
        // (aioquic 1.7.2 picks AES-256-GCM among our defaults, as with nothing named.)
        ([.ECDHE_ECDSA_WITH_AES_128_GCM_SHA256], .AES_256_GCM_SHA384),
        ([], .AES_256_GCM_SHA384),
    ])
    func namedCipherSuite(_ named: [tls_ciphersuite_t], _ expected: tls_ciphersuite_t) async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let parameters = Self.pinned(server.certificate)
        let options = try #require(parameters.defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options)
        for suite in named { sec_protocol_options_append_tls_ciphersuite(options.securityProtocolOptions, suite) }
        let connection = Self.connection(to: server, using: parameters)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        defer { connection.cancel() }
        let metadata = try #require(connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)
        #expect(sec_protocol_metadata_get_negotiated_tls_ciphersuite(metadata.securityProtocolMetadata) == expected)
        #expect(await TLSInteropTests.exchange(connection, "named suite") == "named suite")
    }

    @Test("2 MiB sent in 64 KiB sends come back whole, each send completing")
    func bulk() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = Self.connection(to: server, using: Self.pinned(server.certificate))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        let chunk = 64 * 1024, count = 32
        let completions = Recorder<Bool>()
        for index in 0..<count {
            let bytes = Data((0..<chunk).map { UInt8(truncatingIfNeeded: $0 &+ index) })
            connection.send(content: bytes, contentContext: index == count - 1 ? .finalMessage : .defaultMessage,
                            completion: .contentProcessed { completions.append($0 == nil) })
        }
        let (echoed, ended) = await Self.receiveToEnd(connection)
        #expect(ended, "the echo ended early, connection \(connection.state)")
        try #require(echoed.count == chunk * count, "\(echoed.count) bytes echoed, connection \(connection.state)")
        for index in 0..<count {
            let slice = echoed[(index * chunk)..<((index + 1) * chunk)]
            #expect(slice.elementsEqual((0..<chunk).map { UInt8(truncatingIfNeeded: $0 &+ index) }), "send \(index)")
        }
        let done = try await completions.wait(count: count, "every send's completion")
        #expect(done.allSatisfy { $0 })
        try await Self.waitUntilCancelled(connection)
    }

    @Test("by default the system trust store decides: a self-signed server fails the connection with errSSLXCertChainInvalid")
    func untrusted() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = Self.connection(to: server, using: .quic(alpn: ["echo"]))
        #expect(await TLSInteropTests.settle(connection) == .failed(.tls(-9807)))
        connection.cancel()
    }

    @Test("the metadata gives the peer's transport parameters (aioquic: idle 60 s, 128 streams, 64 KiB datagram frames) and this side's stream limit")
    func transportParametersInMetadata() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = Self.connection(to: server, using: Self.pinned(server.certificate))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        let metadata = try #require(connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)
        #expect(metadata.remoteIdleTimeout == 60_000)
        #expect(metadata.remoteMaxStreamsBidirectional == 128)
        #expect(metadata.remoteMaxStreamsUnidirectional == 128)
        #expect(metadata.usableDatagramFrameSize == 65_536)
        #expect(metadata.localMaxStreamsBidirectional == 100)
        connection.cancel()
    }

    @Test("keepAlive: with a 2 s idle timeout, a silent connection times out; with keepAlive .seconds(1) set on its metadata, it is still ready after 4 s and echoes")
    func keepAliveKeepsItOpen() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        func shortIdle() -> NWParameters {
            let parameters = Self.pinned(server.certificate)
            (parameters.defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options)?.idleTimeout = 2_000
            return parameters
        }
        let silent = Self.connection(to: server, using: shortIdle())
        let silentStates = Recorder<NWConnection.State>()
        silent.stateUpdateHandler = { silentStates.append($0) }
        silent.start(queue: DispatchQueue(label: "silent"))
        _ = try await silentStates.wait("ready") { $0.contains(.ready) }
        let kept = Self.connection(to: server, using: shortIdle())
        #expect(await TLSInteropTests.settle(kept) == .ready)
        let metadata = try #require(kept.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)
        metadata.keepAlive = .seconds(1)
        let seen = try await silentStates.wait("the silent one's idle timeout", timeout: 6) {
            $0.contains { if case .failed = $0 { return true }; return false }
        }
        #expect(seen.contains(.failed(.posix(.ETIMEDOUT))), "\(seen)")
        await pause(milliseconds: 2_000)
        #expect(kept.state == .ready)
        #expect(await TLSInteropTests.exchange(kept, "still here") == "still here")
        silent.cancel()
        kept.cancel()
    }

    @Test("a connection whose options say .unidirectional carries stream 2, sends only: its receive ends at once, its bytes and FIN reach the server")
    func unidirectional() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let parameters = Self.pinned(server.certificate)
        (parameters.defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options)?.direction = .unidirectional
        let connection = Self.connection(to: server, using: parameters)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        #expect((connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)?.streamIdentifier == 2)
        let (nothing, ended) = await Self.receiveToEnd(connection)
        #expect(nothing.isEmpty && ended)
        connection.send(content: Data(repeating: 7, count: 100_000), contentContext: .finalMessage, completion: .contentProcessed { _ in })
        try await server.process.waitForOutput(containing: "uni 2 100000\n")
        connection.cancel()
    }

    @Test("applicationError set on the metadata, then cancel: the server sees the connection closed with that code")
    func closesWithApplicationError() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = Self.connection(to: server, using: Self.pinned(server.certificate))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        #expect(await TLSInteropTests.exchange(connection, "hi") == "hi")
        let metadata = try #require(connection.metadata(definition: NWProtocolQUIC.definition) as? NWProtocolQUIC.Metadata)
        metadata.applicationError = 0x101
        #expect(metadata.applicationError.code == 0x101)
        try await Self.waitUntilCancelled(connection)
        try await server.process.waitForOutput(containing: "closed 257\n")
    }

    @Test("the server closing the QUIC connection with an application error fails the connection with ECONNABORTED")
    func serverCloses() async throws {
        guard let server = try await AioquicServer.start() else { return }
        defer { server.stop() }
        let connection = Self.connection(to: server, using: Self.pinned(server.certificate))
        let states = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { states.append($0) }
        connection.start(queue: DispatchQueue(label: "quic-client"))
        _ = try await states.wait("ready") { $0.contains(.ready) }
        connection.send(content: Data("close:5".utf8), completion: .contentProcessed { _ in })
        let seen = try await states.wait("failed") { $0.contains { if case .failed = $0 { return true }; return false } }
        #expect(seen.contains(.failed(.posix(.ECONNABORTED))), "\(seen)")
        connection.cancel()
    }

    @Test("what is not built yet is refused with EPROTONOSUPPORT, not run as something else: protocols above QUIC, datagram listeners; a QUIC listener without an identity fails with errSSLBadCert")
    func refusedForNow() async throws {
        let datagramListener = try NWListener(using: .quicDatagram(alpn: ["echo"]))
        let refused = Recorder<NWListener.State>()
        datagramListener.stateUpdateHandler = { refused.append($0) }
        datagramListener.newConnectionHandler = { $0.cancel() }
        datagramListener.start(queue: DispatchQueue(label: "quic-datagram-listener"))
        let refusedStates = try await refused.wait("failed") { $0.contains { if case .failed = $0 { return true }; return false } }
        #expect(refusedStates.contains(.failed(.posix(.EPROTONOSUPPORT))), "\(refusedStates)")
        datagramListener.cancel()
        let framed = NWParameters.quic(alpn: ["echo"])
        framed.defaultProtocolStack.applicationProtocols.insert(NWProtocolTLS.Options(), at: 0)
        let above = NWConnection(host: "127.0.0.1", port: 9, using: framed)
        #expect(await TLSInteropTests.settle(above) == .failed(.posix(.EPROTONOSUPPORT)))
        above.cancel()
        let listener = try NWListener(using: .quic(alpn: ["echo"]))
        let failed = Recorder<NWListener.State>()
        listener.stateUpdateHandler = { failed.append($0) }
        listener.newConnectionHandler = { $0.cancel() }
        listener.start(queue: DispatchQueue(label: "quic-listener"))
        let states = try await failed.wait("failed") { $0.contains { if case .failed = $0 { return true }; return false } }
        #expect(states.contains(.failed(.tls(-9808))), "\(states)")
        listener.cancel()
    }

    @Test("QUIC options keep their settings, copy independently, and show up in the stack")
    func options() {
        let options = NWProtocolQUIC.Options(alpn: ["h3", "echo"])
        options.idleTimeout = 5_000
        options.initialMaxData = 123_456
        options.initialMaxStreamsBidirectional = 7
        let parameters = NWParameters(quic: options)
        let copy = parameters.copy()
        let copied = copy.defaultProtocolStack.transportProtocol as? NWProtocolQUIC.Options
        #expect(copied?.alpn == ["h3", "echo"])
        #expect(copied?.idleTimeout == 5_000)
        #expect(copied?.initialMaxData == 123_456)
        copied?.initialMaxData = 1
        #expect(options.initialMaxData == 123_456, "a copy is independent")
        #expect(copied?.initialMaxStreamsBidirectional == 7)
        #expect(NWProtocolQUIC.ApplicationError(integerLiteral: 9).code == 9)
        #expect(NWParameters.quic(alpn: ["x"]).defaultProtocolStack.transportProtocol is NWProtocolQUIC.Options)
    }
}
