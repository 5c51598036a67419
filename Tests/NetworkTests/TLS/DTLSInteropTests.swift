#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// DTLS over UDP against real peers nobody here wrote: `gnutls-serv --udp --echo` and
/// `openssl s_server -dtls1_2` as servers for NWConnection, `openssl s_client -dtls1_2` as the
/// client of an NWListener. Certificates are made by the tests with `openssl req`.
@Suite("TLS.DTLS", .serialized)
struct DTLSInteropTests {
    typealias Identity = TLSInteropTests.Identity

    static let pskIdentity = "nw-dtls-client"
    static let pskKey = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })
    static var pskKeyHex: String { pskKey.map { String(format: "%02x", $0) }.joined() }

    /// `gnutls-serv` in DTLS echo mode with `identity` (and PSK), offering ALPN `echo`.
    static func startGnuTLSEcho(_ identity: Identity) async throws -> (PeerProcess, UInt16)? {
        guard let server = PeerProcess.executable("gnutls-serv", package: "gnutls-bin") else { return nil }
        let port = try freePort(datagram: true)
        let passwords = identity.directory.appendingPathComponent("psk.txt")
        try Data("\(pskIdentity):\(pskKeyHex)\n".utf8).write(to: passwords)
        let process = try PeerProcess(server, [
            "--udp", "--echo", "-p", "\(port)", "--x509certfile", identity.certificatePath,
            "--x509keyfile", identity.keyPath, "--pskpasswd", passwords.path, "--alpn", "echo",
            "--priority", "NORMAL:-VERS-ALL:+VERS-DTLS1.2:+PSK:+ECDHE-PSK", "--quiet",
        ])
        try await waitUntilBound(port: port, udp: true)
        return (process, port)
    }

    /// gnutls-serv's DTLS echo with `identity`, and a connection to it (pinning its certificate)
    /// that reached `ready`.
    static func readyConnectionToGnuTLSEcho(_ identity: Identity) async throws -> (PeerProcess, NWConnection)? {
        guard let (server, port) = try await startGnuTLSEcho(identity) else { return nil }
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: pinned(to: try identity.certificateDER))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        return (server, connection)
    }

    /// DTLS parameters whose verify block trusts exactly `certificate`.
    static func pinned(to certificate: Data) -> NWParameters {
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_add_tls_application_protocol(tls.securityProtocolOptions, "echo")
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
            complete(trust.certificates.first?.derData == certificate)
        }, DispatchQueue(label: "verify"))
        return NWParameters(dtls: tls)
    }

    /// Adds `key` under the test's PSK identity to `options`.
    static func addKey(_ key: Data = pskKey, to options: NWProtocolTLS.Options) {
        let secret = key.withUnsafeBytes { DispatchData(bytes: $0) }
        let identity = Data(pskIdentity.utf8).withUnsafeBytes { DispatchData(bytes: $0) }
        sec_protocol_options_add_pre_shared_key(options.securityProtocolOptions, secret as __DispatchData, identity as __DispatchData)
    }

    /// DTLS parameters with the test's pre-shared key and Apple's usual PSK suite.
    static func presharedKey() -> NWParameters {
        let tls = NWProtocolTLS.Options()
        addKey(to: tls)
        sec_protocol_options_append_tls_ciphersuite(
            tls.securityProtocolOptions, tls_ciphersuite_t(rawValue: UInt16(TLS_PSK_WITH_AES_128_GCM_SHA256))!)
        return NWParameters(dtls: tls)
    }

    /// Sends each message and collects as many replies, one receive per message.
    static func roundTrip(_ connection: NWConnection, _ messages: [String]) async -> [String] {
        var replies: [String] = []
        for message in messages {
            connection.send(content: Data(message.utf8), completion: .contentProcessed { _ in })
            let reply: String? = await withCheckedContinuation { continuation in
                connection.receiveMessage { data, _, _, _ in
                    continuation.resume(returning: data.map { String(decoding: $0, as: UTF8.self) })
                }
            }
            replies.append(reply ?? "<nil>")
        }
        return replies
    }

    static func metadata(_ connection: NWConnection) throws -> sec_protocol_metadata_t {
        let metadata = try #require(connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata)
        return metadata.securityProtocolMetadata
    }

    @Test("certificate mode against gnutls-serv: ready after the handshake, messages kept whole, DTLS 1.2 and ALPN reported")
    func certificateEcho() async throws {
        let identity = try Identity.make()
        guard let (server, connection) = try await Self.readyConnectionToGnuTLSEcho(identity) else { return }
        defer { server.stop() }
        // gnutls-serv echoes at most 128 bytes per record; bigger messages are for our listener.
        let messages = ["one", "two two", String(repeating: "x", count: 120)]
        #expect(await Self.roundTrip(connection, messages) == messages)
        let metadata = try Self.metadata(connection)
        #expect(sec_protocol_metadata_get_negotiated_tls_protocol_version(metadata) == .DTLSv12)
        #expect(sec_protocol_metadata_get_negotiated_protocol(metadata).map { String(cString: $0) } == "echo")
        var chain: [Data] = []
        sec_protocol_metadata_access_peer_certificate_chain(metadata) { chain.append($0.derData) }
        #expect(chain.first == (try identity.certificateDER))
        connection.cancel()
    }

    @Test("default verification refuses a self-signed DTLS server with a TLS error")
    func selfSignedRefused() async throws {
        let identity = try Identity.make()
        guard let (server, port) = try await Self.startGnuTLSEcho(identity) else { return }
        defer { server.stop() }
        let connection = NWConnection(host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: .dtls)
        let state = await TLSInteropTests.settle(connection)
        connection.cancel()
        guard case .failed(.tls(let status)) = state else {
            Issue.record("expected failed(.tls), got \(String(describing: state))")
            return
        }
        #expect(status == -9807, "status \(status)")
    }

    @Test("PSK mode against gnutls-serv with TLS_PSK_WITH_AES_128_GCM_SHA256")
    func presharedKeyEcho() async throws {
        let identity = try Identity.make()
        guard let (server, port) = try await Self.startGnuTLSEcho(identity) else { return }
        defer { server.stop() }
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.presharedKey())
        #expect(await TLSInteropTests.settle(connection) == .ready)
        #expect(await Self.roundTrip(connection, ["psk hello"]) == ["psk hello"])
        let metadata = try Self.metadata(connection)
        #expect(sec_protocol_metadata_get_negotiated_tls_ciphersuite(metadata) == tls_ciphersuite_t(rawValue: 0x00A8))
        connection.cancel()
    }

    @Test("PSK against openssl s_server -dtls1_2: what we send arrives there")
    func presharedKeyOpenSSLServer() async throws {
        guard let openssl = TLSInteropTests.openssl() else { return }
        let port = try freePort(datagram: true)
        let server = try PeerProcess(openssl, [
            "s_server", "-dtls1_2", "-accept", "\(port)", "-nocert", "-psk", Self.pskKeyHex,
            "-psk_identity", Self.pskIdentity, "-cipher", "PSK-AES128-GCM-SHA256", "-quiet",
        ])
        defer { server.stop() }
        try await waitUntilBound(port: port, udp: true)
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.presharedKey())
        #expect(await TLSInteropTests.settle(connection) == .ready)
        connection.send(content: Data("from network\n".utf8), completion: .contentProcessed { _ in })
        try await server.waitForOutput(containing: "from network")
        connection.cancel()
    }

    @Test("a wrong pre-shared key never makes the connection ready (DTLS drops what it cannot decrypt)")
    func wrongKeyNeverReady() async throws {
        let identity = try Identity.make()
        guard let (server, port) = try await Self.startGnuTLSEcho(identity) else { return }
        defer { server.stop() }
        let tls = NWProtocolTLS.Options()
        Self.addKey(Data(repeating: 9, count: 32), to: tls)
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: NWParameters(dtls: tls))
        let states = Recorder<NWConnection.State>()
        connection.stateUpdateHandler = { states.append($0) }
        connection.start(queue: DispatchQueue(label: "wrong-psk"))
        // The server silently discards our Finished (RFC 6347 §4.1.2.7), so the handshake can
        // only time out (DTLSSessionTests checks that it does); meanwhile nothing is ready.
        await pause(milliseconds: 2_000)
        #expect(states.values == [.preparing])
        connection.cancel()
        try await states.wait("cancelled") { $0.last == .cancelled }
    }

    /// A DTLS listener that echoes every message of every peer.
    static func echoListener(_ parameters: NWParameters, queue: DispatchQueue) async throws -> (NWListener, UInt16) {
        let listener = try NWListener(using: parameters, on: .any)
        listener.newConnectionHandler = { connection in
            @Sendable func loop() {
                connection.receiveMessage { data, _, _, error in
                    guard error == nil, let data else { return }
                    connection.send(content: data, completion: .contentProcessed { _ in loop() })
                }
            }
            connection.stateUpdateHandler = { if $0 == .ready { loop() } }
            connection.start(queue: queue)
        }
        return (listener, try await TLSInteropTests.start(listener, queue: queue))
    }

    static func listenerParameters(_ identity: Identity) throws -> NWParameters {
        NWParameters(dtls: try identity.serverOptions())
    }

    @Test("an NWListener serves DTLS to openssl s_client")
    func listenerServesOpenSSLClient() async throws {
        let identity = try Identity.make()
        guard let openssl = TLSInteropTests.openssl() else { return }
        let queue = DispatchQueue(label: "dtls-listener")
        let (listener, port) = try await Self.echoListener(try Self.listenerParameters(identity), queue: queue)
        defer { listener.cancel() }
        let client = try PeerProcess(
            openssl, ["s_client", "-dtls1_2", "-connect", "127.0.0.1:\(port)", "-quiet"], input: Data("ping over dtls\n".utf8))
        defer { client.stop() }
        try await client.waitForOutput(containing: "ping over dtls")
    }

    @Test("an NWListener gives each DTLS peer its own flow; our own clients interoperate, PSK too")
    func listenerPerPeerFlows() async throws {
        let identity = try Identity.make()
        let queue = DispatchQueue(label: "dtls-peers")
        let (listener, port) = try await Self.echoListener(try Self.listenerParameters(identity), queue: queue)
        defer { listener.cancel() }
        let certificate = try identity.certificateDER
        let first = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.pinned(to: certificate))
        let second = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.pinned(to: certificate))
        #expect(await TLSInteropTests.settle(first) == .ready)
        #expect(await TLSInteropTests.settle(second) == .ready)
        let big = String(repeating: "b", count: 1200)
        #expect(await Self.roundTrip(first, ["first a", big, "first b"]) == ["first a", big, "first b"])
        #expect(await Self.roundTrip(second, ["second"]) == ["second"])
        first.cancel()
        second.cancel()

        let pskListenerOptions = NWProtocolTLS.Options()
        Self.addKey(to: pskListenerOptions)
        let (pskListener, pskPort) = try await Self.echoListener(NWParameters(dtls: pskListenerOptions), queue: queue)
        defer { pskListener.cancel() }
        let pskClient = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: pskPort)!, using: Self.presharedKey())
        #expect(await TLSInteropTests.settle(pskClient) == .ready)
        #expect(await Self.roundTrip(pskClient, ["psk to our listener"]) == ["psk to our listener"])
        pskClient.cancel()
    }

    @Test("a DTLS listener answers ClientHellos without a cookie statelessly: spoofed floods make no flows")
    func cookiesStopSpoofedFloods() async throws {
        guard let openssl = TLSInteropTests.openssl() else { return }
        // A real ClientHello, caught by a plain UDP socket standing in for a server.
        let catcher = try RawSocket.udpPeer()
        defer { catcher.close() }
        let catcherPort = catcher.localPort
        let client = try PeerProcess(openssl, ["s_client", "-dtls1_2", "-connect", "127.0.0.1:\(catcherPort)", "-quiet"])
        defer { client.stop() }
        let hello = try #require(try await offload { try catcher.receiveFrom(timeout: 10) }?.bytes)
        #expect(hello.first == 22, "a handshake record")

        let identity = try Identity.make()
        let queue = DispatchQueue(label: "dtls-cookies")
        let accepted = Recorder<NWConnection>()
        let listener = try NWListener(using: try Self.listenerParameters(identity), on: .any)
        listener.newConnectionHandler = { connection in
            accepted.append(connection)
            connection.start(queue: queue)
        }
        let port = try await TLSInteropTests.start(listener, queue: queue)
        defer { listener.cancel() }
        // 50 "spoofed" sources replay the ClientHello: each gets a HelloVerifyRequest (handshake
        // type 3) and none becomes a connection.
        for _ in 0..<50 {
            let spoofer = try RawSocket.udpPeer()
            defer { spoofer.close() }
            try spoofer.send(to: port, hello)
            // (Generous: a loaded run with every suite in parallel saw a 5 s wait miss it.)
            let reply = try #require(try await offload { try spoofer.receiveFrom(timeout: 20) }?.bytes)
            #expect(reply.count > 13 && reply[0] == 22 && reply[13] == 3, "HelloVerifyRequest, got \(reply.prefix(16))")
        }
        await pause(milliseconds: 200)
        #expect(accepted.values.isEmpty)
        // A real client completes the exchange and is handed over once.
        let good = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.pinned(to: try identity.certificateDER))
        #expect(await TLSInteropTests.settle(good) == .ready)
        good.cancel()
        #expect(accepted.values.count == 1)
        for connection in accepted.values { connection.cancel() }
    }

    @Test("a message too big for one DTLS record fails its send with EMSGSIZE; the connection lives on")
    func oversizeMessage() async throws {
        let identity = try Identity.make()
        guard let (server, connection) = try await Self.readyConnectionToGnuTLSEcho(identity) else { return }
        defer { server.stop() }
        let error: NWError? = await withCheckedContinuation { continuation in
            connection.send(content: Data(count: 20_000), completion: .contentProcessed { continuation.resume(returning: $0) })
        }
        #expect(error == .posix(.EMSGSIZE))
        #expect(await Self.roundTrip(connection, ["still here"]) == ["still here"])
        connection.cancel()
    }
}
