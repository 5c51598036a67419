#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import NetworkSync
import PeerSupport
import Testing

@testable import Network

/// TLS over TCP against OpenSSL, a real peer nobody here wrote: `openssl s_server` as the
/// server for our NWConnection, `openssl s_client` as the client of our NWListener. The
/// certificates are made by the test with `openssl req`.
@Suite("TLS.Interop", .serialized)
struct TLSInteropTests {
    /// A self-signed certificate for `localhost` / 127.0.0.1 in a temporary folder.
    struct Identity {
        let directory: URL
        var certificatePath: String { directory.appendingPathComponent("cert.pem").path }
        var keyPath: String { directory.appendingPathComponent("key.pem").path }

        static func make() throws -> Identity {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nwtls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let identity = Identity(directory: directory)
            try TLSInteropTests.runOpenSSL([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-keyout", identity.keyPath, "-out", identity.certificatePath,
            ])
            return identity
        }

        var certificateDER: Data {
            get throws {
                let pem = try String(contentsOfFile: certificatePath, encoding: .utf8)
                return try #require(PEM.blocks(in: pem).first?.der)
            }
        }

        /// TLS options that serve this identity (for a listener).
        func serverOptions() throws -> NWProtocolTLS.Options {
            let tls = NWProtocolTLS.Options()
            sec_protocol_options_set_local_identity(tls.securityProtocolOptions, try secIdentity)
            return tls
        }

        var secIdentity: sec_identity_t {
            get throws {
                let certificate = try String(contentsOfFile: certificatePath, encoding: .utf8)
                let key = try String(contentsOfFile: keyPath, encoding: .utf8)
                return try #require(sec_identity_create_with_pem(certificateChain: certificate, privateKey: key))
            }
        }
    }

    /// The openssl binary; a missing one fails under CI and says why elsewhere.
    static func openssl(sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        PeerProcess.executable("openssl", sourceLocation: sourceLocation)
    }

    /// Runs `openssl arguments` to completion (making keys and certificates); a failure, or a
    /// missing openssl, fails the test.
    static func runOpenSSL(_ arguments: [String]) throws {
        let executable = try #require(Self.openssl())
        let (status, output) = try ShortTool.run(executable, arguments)
        try #require(status == 0, "openssl \(arguments.first ?? "") failed: \(output)")
    }

    /// `openssl s_server` reversing each line (`-rev`), offering ALPN `echo`.
    static func startServer(_ identity: Identity, extra: [String] = []) async throws -> (PeerProcess, UInt16)? {
        guard let openssl = openssl() else { return nil }
        let port = try freePort()
        let server = try PeerProcess(
            openssl,
            ["s_server", "-accept", "\(port)", "-cert", identity.certificatePath, "-key", identity.keyPath,
             "-alpn", "echo", "-rev", "-quiet"] + extra)
        try await waitUntilBound(port: port, udp: false)
        return (server, port)
    }

    /// Starts `connection` and returns the first state after `preparing`.
    static func settle(_ connection: NWConnection, queue: DispatchQueue = DispatchQueue(label: "tls-client")) async -> NWConnection.State? {
        let states = AsyncStream<NWConnection.State>.makeStream()
        connection.stateUpdateHandler = { states.continuation.yield($0) }
        connection.start(queue: queue)
        let timeout = Task {
            try await Task.sleep(for: .seconds(15))
            states.continuation.finish()
        }
        defer { timeout.cancel() }
        for await state in states.stream where state != .preparing { return state }
        return nil
    }

    static func exchange(_ connection: NWConnection, _ text: String) async -> String? {
        connection.send(content: Data(text.utf8), completion: .contentProcessed { _ in })
        return await withCheckedContinuation { continuation in
            connection.receive(minimumIncompleteLength: text.utf8.count, maximumLength: 1024) { data, _, _, _ in
                continuation.resume(returning: data.map { String(decoding: $0, as: UTF8.self) })
            }
        }
    }

    /// TLS options whose verify block trusts exactly `certificate` (pinning).
    static func pinned(to certificate: Data, versions: (tls_protocol_version_t, tls_protocol_version_t)? = nil) -> NWParameters {
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_add_tls_application_protocol(tls.securityProtocolOptions, "echo")
        if let versions {
            sec_protocol_options_set_min_tls_protocol_version(tls.securityProtocolOptions, versions.0)
            sec_protocol_options_set_max_tls_protocol_version(tls.securityProtocolOptions, versions.1)
        }
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
            complete(trust.certificates.first?.derData == certificate)
        }, DispatchQueue(label: "verify"))
        return NWParameters(tls: tls)
    }

    /// This process's sockets still connected to `port` on this host (client side).
    static func clientSockets(toPort port: UInt16) -> [ProcFS.SocketRow] {
        let ours = ProcFS.openSocketInodes()
        return ProcFS.sockets().filter { $0.remotePort == port && ours.contains($0.inode) }
    }

    /// Starts `listener` on `queue` and returns its port once it is ready.
    static func start(_ listener: NWListener, queue: DispatchQueue) async throws -> UInt16 {
        let ready = AsyncStream<UInt16>.makeStream()
        listener.stateUpdateHandler = { if $0 == .ready, let port = listener.port { ready.continuation.yield(port.rawValue) } }
        listener.start(queue: queue)
        var iterator = ready.stream.makeAsyncIterator()
        return try #require(await iterator.next())
    }

    /// A listener on any port whose connections echo their first message (see `echoOnce`),
    /// started and ready; returns it and its port.
    static func startEchoOnceListener(
        _ parameters: NWParameters = .tcp, queue: DispatchQueue
    ) async throws -> (NWListener, UInt16) {
        let listener = try NWListener(using: parameters, on: .any)
        echoOnce(on: listener, queue: queue)
        return (listener, try await start(listener, queue: queue))
    }

    /// Each inbound connection echoes its first message back as its final message.
    static func echoOnce(on listener: NWListener, queue: DispatchQueue) {
        listener.newConnectionHandler = { connection in
            connection.stateUpdateHandler = { state in
                guard state == .ready else { return }
                connection.receive(minimumIncompleteLength: 1, maximumLength: 100) { data, _, _, _ in
                    connection.send(content: data, contentContext: .finalMessage, completion: .contentProcessed { _ in })
                }
            }
            connection.start(queue: queue)
        }
    }

    @Test("a self-signed server is refused by default with a TLS error, never plaintext")
    func selfSignedRefused() async throws {
        let identity = try Identity.make()
        guard let (server, port) = try await Self.startServer(identity) else { return }
        defer { server.stop() }
        let connection = NWConnection(host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: .tls)
        let state = await Self.settle(connection)
        connection.cancel()
        guard case .failed(.tls(let status)) = state else {
            Issue.record("expected failed(.tls), got \(String(describing: state))")
            return
        }
        #expect([-9807, -9808, -9812].contains(status), "status \(status)")
    }

    @Test("a verify block that pins the certificate connects; ALPN, version and peer chain are reported")
    func pinnedCertificateConnects() async throws {
        let identity = try Identity.make()
        guard let (server, port) = try await Self.startServer(identity) else { return }
        defer { server.stop() }
        let certificate = try identity.certificateDER
        let connection = NWConnection(host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: Self.pinned(to: certificate))
        #expect(await Self.settle(connection) == .ready)
        #expect(await Self.exchange(connection, "hello\n") == "olleh\n")
        let metadata = try #require(connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata)
        let negotiated = sec_protocol_metadata_get_negotiated_protocol(metadata.securityProtocolMetadata).map { String(cString: $0) }
        #expect(negotiated == "echo")
        #expect(sec_protocol_metadata_get_negotiated_tls_protocol_version(metadata.securityProtocolMetadata) == .TLSv13)
        var chain: [Data] = []
        sec_protocol_metadata_access_peer_certificate_chain(metadata.securityProtocolMetadata) { chain.append($0.derData) }
        #expect(chain.first == certificate)
        let report: NWConnection.EstablishmentReport? = await withCheckedContinuation { continuation in
            connection.requestEstablishmentReport(queue: DispatchQueue(label: "report")) { continuation.resume(returning: $0) }
        }
        #expect(report?.handshakes.map(\.definition.name) == ["tcp", "tls"])
        connection.cancel()
    }

    @Test("a server that speaks first: data right behind the handshake is not lost")
    func serverSpeaksFirst() async throws {
        let identity = try Identity.make()
        guard let openssl = Self.openssl() else { return }
        let port = try freePort()
        // Without -rev, s_server sends its standard input to the client as soon as it connects.
        let server = try PeerProcess(
            openssl, ["s_server", "-accept", "\(port)", "-cert", identity.certificatePath, "-key", identity.keyPath, "-quiet"],
            input: Data("220 banner\n".utf8))
        defer { server.stop() }
        try await waitUntilBound(port: port, udp: false)
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: Self.pinned(to: try identity.certificateDER))
        let banner: String? = await withCheckedContinuation { continuation in
            // Issued before start: it must get the banner however early it arrives.
            connection.receive(minimumIncompleteLength: 11, maximumLength: 100) { data, _, _, _ in
                continuation.resume(returning: data.map { String(decoding: $0, as: UTF8.self) })
            }
            connection.start(queue: DispatchQueue(label: "banner"))
        }
        #expect(banner == "220 banner\n")
        connection.cancel()
    }

    @Test("a verify block decides alone: a pinned certificate is accepted whatever name was asked for")
    func verifyBlockOverridesHostName() async throws {
        let identity = try Identity.make()
        guard let (server, port) = try await Self.startServer(identity) else { return }
        defer { server.stop() }
        let parameters = Self.pinned(to: try identity.certificateDER)
        let tls = try #require(parameters.defaultProtocolStack.applicationProtocols.first as? NWProtocolTLS.Options)
        sec_protocol_options_set_tls_server_name(tls.securityProtocolOptions, "not-the-certificate-name.example")
        let connection = NWConnection(host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: parameters)
        #expect(await Self.settle(connection) == .ready)
        connection.cancel()
    }

    @Test("a verify block that rejects fails with errSSLBadCert")
    func verifyBlockRejects() async throws {
        let identity = try Identity.make()
        guard let (server, port) = try await Self.startServer(identity) else { return }
        defer { server.stop() }
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: Self.pinned(to: Data([1, 2, 3])))
        #expect(await Self.settle(connection) == .failed(.tls(-9808)))
        connection.cancel()
    }

    @Test("version bounds: a TLS 1.2-only client negotiates TLS 1.2")
    func versionBounds() async throws {
        let identity = try Identity.make()
        guard let (server, port) = try await Self.startServer(identity) else { return }
        defer { server.stop() }
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!,
            using: Self.pinned(to: try identity.certificateDER, versions: (.TLSv12, .TLSv12)))
        #expect(await Self.settle(connection) == .ready)
        let metadata = try #require(connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata)
        #expect(sec_protocol_metadata_get_negotiated_tls_protocol_version(metadata.securityProtocolMetadata) == .TLSv12)
        #expect(await Self.exchange(connection, "abc\n") == "cba\n")
        connection.cancel()
    }

    @Test("a TLS 1.3-only client against a TLS 1.2-only server fails with a TLS error")
    func versionMismatchFails() async throws {
        let identity = try Identity.make()
        guard let (server, port) = try await Self.startServer(identity, extra: ["-tls1_2"]) else { return }
        defer { server.stop() }
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!,
            using: Self.pinned(to: try identity.certificateDER, versions: (.TLSv13, .TLSv13)))
        let state = await Self.settle(connection)
        connection.cancel()
        guard case .failed(.tls) = state else {
            Issue.record("expected failed(.tls), got \(String(describing: state))")
            return
        }
    }

    @Test("client certificates: presented when the server demands one, refused without")
    func clientCertificateToOpenSSL() async throws {
        let serverIdentity = try Identity.make()
        let clientIdentity = try Identity.make()
        guard let (server, port) = try await Self.startServer(
            serverIdentity, extra: ["-Verify", "1", "-CAfile", clientIdentity.certificatePath])
        else { return }
        defer { server.stop() }
        let endpoint = NWEndpoint.Port(rawValue: port)!

        let withCertificate = Self.pinned(to: try serverIdentity.certificateDER)
        let options = withCertificate.defaultProtocolStack.applicationProtocols[0] as! NWProtocolTLS.Options
        sec_protocol_options_set_local_identity(options.securityProtocolOptions, try clientIdentity.secIdentity)
        let good = NWConnection(host: "localhost", port: endpoint, using: withCertificate)
        #expect(await Self.settle(good) == .ready)
        #expect(await Self.exchange(good, "mtls\n") == "sltm\n")
        good.cancel()

        // The same identity supplied through a challenge block.
        let challenged = Self.pinned(to: try serverIdentity.certificateDER)
        let challengedOptions = challenged.defaultProtocolStack.applicationProtocols[0] as! NWProtocolTLS.Options
        let clientSecIdentity = try clientIdentity.secIdentity
        let asked = Lock(0)
        sec_protocol_options_set_challenge_block(challengedOptions.securityProtocolOptions, { _, complete in
            asked.withLock { $0 += 1 }
            complete(clientSecIdentity)
        }, DispatchQueue(label: "challenge"))
        let viaChallenge = NWConnection(host: "localhost", port: endpoint, using: challenged)
        #expect(await Self.settle(viaChallenge) == .ready)
        #expect(await Self.exchange(viaChallenge, "block\n") == "kcolb\n")
        #expect(asked.withLock { $0 } == 1)
        viaChallenge.cancel()

        // Without a certificate the server aborts: the handshake (or the first read, with
        // TLS 1.3's late client authentication) fails with a TLS error, never plaintext.
        let bad = NWConnection(host: "localhost", port: endpoint, using: Self.pinned(to: try serverIdentity.certificateDER))
        let state = await Self.settle(bad)
        if state == .ready {
            let failed: NWError? = await withCheckedContinuation { continuation in
                bad.send(content: Data("x\n".utf8), completion: .contentProcessed { _ in })
                bad.receive(minimumIncompleteLength: 1, maximumLength: 10) { _, _, _, error in continuation.resume(returning: error) }
            }
            #expect(failed != nil, "the server must not serve a client without a certificate")
        } else if case .failed(.tls) = state {
        } else {
            Issue.record("unexpected state \(String(describing: state))")
        }
        bad.cancel()
    }

    @Test("an NWListener that requires client certificates checks them with its verify block")
    func listenerRequiresClientCertificate() async throws {
        let serverIdentity = try Identity.make()
        let clientIdentity = try Identity.make()
        guard let openssl = Self.openssl() else { return }
        let expectedClient = try clientIdentity.certificateDER
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_local_identity(tls.securityProtocolOptions, try serverIdentity.secIdentity)
        sec_protocol_options_set_peer_authentication_required(tls.securityProtocolOptions, true)
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
            complete(trust.certificates.first?.derData == expectedClient)
        }, DispatchQueue(label: "verify-client"))
        let listener = try NWListener(using: NWParameters(tls: tls))
        let queue = DispatchQueue(label: "mtls-listener")
        Self.echoOnce(on: listener, queue: queue)
        let port = try await Self.start(listener, queue: queue)

        let trusted = try PeerProcess(
            openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-quiet", "-ign_eof",
                      "-cert", clientIdentity.certificatePath, "-key", clientIdentity.keyPath],
            input: Data("with cert\n".utf8))
        defer { trusted.stop() }
        try await trusted.waitForOutput(containing: "with cert", timeout: 15)

        let anonymous = try PeerProcess(
            openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-quiet", "-ign_eof"],
            input: Data("no cert\n".utf8))
        defer { anonymous.stop() }
        _ = await anonymous.waitForExit(timeout: 10)
        #expect(!String(decoding: anonymous.standardOutput, as: UTF8.self).contains("no cert"))
        listener.cancel()
    }

    /// PSK parameters the way Apple's peer-to-peer sample builds them.
    static func pskParameters(key: [UInt8], identity: String) -> NWParameters {
        let tls = NWProtocolTLS.Options()
        let keyData = key.withUnsafeBytes { DispatchData(bytes: $0) }
        let identityData = Array(identity.utf8).withUnsafeBytes { DispatchData(bytes: $0) }
        sec_protocol_options_add_pre_shared_key(tls.securityProtocolOptions, keyData as __DispatchData, identityData as __DispatchData)
        sec_protocol_options_append_tls_ciphersuite(
            tls.securityProtocolOptions, tls_ciphersuite_t(rawValue: UInt16(TLS_PSK_WITH_AES_128_GCM_SHA256))!)
        return NWParameters(tls: tls)
    }

    static let pskKey: [UInt8] = Array(0..<32)
    static var pskHex: String { pskKey.map { String(format: "%02x", $0) }.joined() }

    // Apple's sample asks for TLS_PSK_WITH_AES_128_GCM_SHA256, which BoringSSL lacks: PSK
    // sessions over TCP run on GnuTLS (docs/tls.md), and the peer offers only that suite.
    @Test("TLS 1.2 PSK set up as Apple's peer-to-peer sample does, against openssl s_server")
    func pskClient() async throws {
        guard let openssl = Self.openssl() else { return }
        let port = try freePort()
        let server = try PeerProcess(
            openssl,
            ["s_server", "-accept", "\(port)", "-nocert", "-psk", Self.pskHex, "-psk_identity", "game",
             "-cipher", "PSK-AES128-GCM-SHA256", "-tls1_2", "-rev", "-quiet"])
        defer { server.stop() }
        try await waitUntilBound(port: port, udp: false)
        let connection = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.pskParameters(key: Self.pskKey, identity: "game"))
        let pskState = await Self.settle(connection)
        #expect(pskState == .ready, "state \(String(describing: pskState))")
        #expect(await Self.exchange(connection, "psk\n") == "ksp\n")
        let metadata = try #require(connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata)
        #expect(sec_protocol_metadata_get_negotiated_tls_ciphersuite(metadata.securityProtocolMetadata).rawValue == 0x00A8)
        #expect(sec_protocol_metadata_get_negotiated_tls_protocol_version(metadata.securityProtocolMetadata) == .TLSv12)
        connection.cancel()

        let wrongKey = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!,
            using: Self.pskParameters(key: Array(repeating: 7, count: 32), identity: "game"))
        let state = await Self.settle(wrongKey)
        wrongKey.cancel()
        guard case .failed(.tls) = state else {
            Issue.record("a wrong PSK must fail the handshake, got \(String(describing: state))")
            return
        }
    }

    @Test("an NWListener with a PSK serves openssl s_client and our own PSK client")
    func pskListener() async throws {
        guard let openssl = Self.openssl() else { return }
        let listener = try NWListener(using: Self.pskParameters(key: Self.pskKey, identity: "game"))
        let queue = DispatchQueue(label: "psk-listener")
        Self.echoOnce(on: listener, queue: queue)
        let port = try await Self.start(listener, queue: queue)

        let client = try PeerProcess(
            openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-psk", Self.pskHex, "-psk_identity", "game",
                      "-cipher", "PSK-AES128-GCM-SHA256", "-tls1_2", "-quiet", "-ign_eof"],
            input: Data("from openssl\n".utf8))
        defer { client.stop() }
        try await client.waitForOutput(containing: "from openssl", timeout: 15)

        let ours = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.pskParameters(key: Self.pskKey, identity: "game"))
        #expect(await Self.settle(ours) == .ready)
        #expect(await Self.exchange(ours, "peer to peer\n") == "peer to peer\n")
        ours.cancel()
        listener.cancel()
    }

    @Test("cancelled TLS connections release their sockets promptly (close_notify is read)")
    func tlsCancelReleasesDescriptors() async throws {
        let identity = try Identity.make()
        let listener = try NWListener(using: NWParameters(tls: try identity.serverOptions()))
        let queue = DispatchQueue(label: "tls-cycles")
        listener.newConnectionHandler = { connection in
            connection.start(queue: queue)
            connection.receive(minimumIncompleteLength: 1, maximumLength: 100) { _, _, _, _ in connection.cancel() }
        }
        let port = try await Self.start(listener, queue: queue)
        let certificate = try identity.certificateDER

        for _ in 0..<30 {
            let connection = NWConnection(host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: Self.pinned(to: certificate))
            #expect(await Self.settle(connection) == .ready)
            connection.cancel()
        }
        // Well under NIOSSL's 5 s shutdown timeout. (Counted as our client sockets to this
        // listener, not as all descriptors: other suites open and close theirs meanwhile.)
        var stillOpen = Self.clientSockets(toPort: port)
        for _ in 0..<20 where !stillOpen.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            stillOpen = Self.clientSockets(toPort: port)
        }
        #expect(stillOpen.isEmpty, "\(stillOpen.count) client sockets still open: \(stillOpen.prefix(5))")
        listener.cancel()
    }

    @Test("a graceful cancel right after many TLS sends: the peer reads every byte, then close_notify")
    func tlsCancelAfterSendsDeliversEverything() async throws {
        let identity = try Identity.make()
        let listener = try NWListener(using: NWParameters(tls: try identity.serverOptions()))
        let queue = DispatchQueue(label: "tls-drain")
        let inbound = Recorder<NWConnection>()
        listener.newConnectionHandler = { inbound.append($0) }
        let port = try await Self.start(listener, queue: queue)

        let chunk = 64 * 1024
        let count = 96  // 6 MiB: more than the kernel buffers between the two while nobody reads
        let client = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: Self.pinned(to: try identity.certificateDER))
        async let settled = Self.settle(client)
        // The server's handshake runs once its connection is started; it receives nothing yet.
        let server = try #require(try await inbound.wait(count: 1, "the inbound connection", timeout: 10).first)
        server.start(queue: queue)
        #expect(await settled == .ready)
        let sent = SentChunks(on: client, count: count, size: chunk)
        let (completions, errors) = (sent.order, sent.errors)
        client.cancel()

        // The server side starts reading only now.
        try await Task.sleep(for: .milliseconds(300))
        let received = Recorder<Data>()
        let ended = Recorder<NWError?>()
        @Sendable func readMore() {
            server.receive(minimumIncompleteLength: 1, maximumLength: 1 << 20) { data, _, isComplete, error in
                if let data { received.append(data) }
                if isComplete || error != nil { ended.append(error) } else { readMore() }
            }
        }
        queue.async { readMore() }
        let end = try await ended.wait(count: 1, "the end of the client's stream", timeout: 20)
        #expect(end == [nil], "the stream should end cleanly (close_notify), got \(end)")
        let bytes = received.values.reduce(into: Data()) { $0.append($1) }
        #expect(bytes.count == sent.expected.count)
        #expect(sent.matches(bytes), "data sent before cancel must reach the peer whole and in order")
        let seen = try await completions.wait(count: count, "every send completion", timeout: 10)
        #expect(seen == Array(0..<count))
        #expect(errors.values.isEmpty, "sends taken before the cancel went out: \(errors.values)")
        server.cancel()
        listener.cancel()
    }

    @Test("a server that stalls mid-handshake hits the connection timeout")
    func stalledHandshakeTimesOut() async throws {
        // Listening, never accepting, never answering the ClientHello.
        let server = try RawSocket.tcpServer()
        let tcp = NWProtocolTCP.Options()
        tcp.connectionTimeout = 2
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: server.localPort)!,
            using: NWParameters(tls: NWProtocolTLS.Options(), tcp: tcp))
        let started = Date()
        #expect(await Self.settle(connection) == .waiting(.posix(.ETIMEDOUT)))
        #expect(Date().timeIntervalSince(started) < SanitizerSlowdown.seconds(8))
        connection.cancel()
    }

    @Test("an NWListener with a PEM identity serves TLS to openssl s_client")
    func listenerServesTLS() async throws {
        let identity = try Identity.make()
        guard let openssl = Self.openssl() else { return }
        let tls = try identity.serverOptions()
        sec_protocol_options_add_tls_application_protocol(tls.securityProtocolOptions, "echo")
        let listener = try NWListener(using: NWParameters(tls: tls))
        let queue = DispatchQueue(label: "tls-listener")
        let received = Lock<[String]>([])
        let negotiated = Lock<String?>(nil)
        listener.newConnectionHandler = { connection in
            connection.stateUpdateHandler = { state in
                guard state == .ready else { return }
                if let metadata = connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata {
                    let alpn = sec_protocol_metadata_get_negotiated_protocol(metadata.securityProtocolMetadata).map { String(cString: $0) }
                    negotiated.withLock { $0 = alpn }
                }
                connection.receive(minimumIncompleteLength: 5, maximumLength: 100) { data, _, _, _ in
                    let text = data.map { String(decoding: $0, as: UTF8.self) } ?? ""
                    received.withLock { $0.append(text) }
                    connection.send(content: Data("secure \(text)".utf8), contentContext: .finalMessage, completion: .contentProcessed { _ in })
                }
            }
            connection.start(queue: queue)
        }
        let port = try await Self.start(listener, queue: queue)
        let client = try PeerProcess(
            openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-alpn", "echo", "-quiet", "-ign_eof"],
            input: Data("ping\n".utf8))
        defer { client.stop() }
        try await client.waitForOutput(containing: "secure ping", timeout: 15)
        #expect(received.withLock { $0 } == ["ping\n"])
        #expect(negotiated.withLock { $0 } == "echo")
        listener.cancel()
    }
}
