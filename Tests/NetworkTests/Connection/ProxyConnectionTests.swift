import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// Proxies through the public API: a privacy context's `ProxyConfiguration` sends an
/// `NWConnection` through tinyproxy (a real HTTP CONNECT proxy), and the establishment report
/// says so.
@Suite("Connection.Proxy", .serialized)
struct ProxyConnectionTests {
    static func parameters(through proxy: ProxyConfiguration) -> NWParameters {
        let parameters = NWParameters.tcp
        let context = NWParameters.PrivacyContext(description: "proxy test")
        context.proxyConfigurations = [proxy]
        parameters.setPrivacyContext(context)
        return parameters
    }

    /// A new folder for a proxy's configuration and log.
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nwproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func report(_ connection: NWConnection) async -> NWConnection.EstablishmentReport? {
        await withCheckedContinuation { continuation in
            connection.requestEstablishmentReport(queue: DispatchQueue(label: "report")) { continuation.resume(returning: $0) }
        }
    }

    @Test("an HTTP CONNECT proxy from the privacy context carries the connection; the report names it")
    func httpConnectProxy() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let (proxy, proxyPort, log) = try await Tinyproxy.start(in: directory) else { return }
        defer { proxy.stop() }
        let (listener, port) = try await TLSInteropTests.startEchoOnceListener(queue: DispatchQueue(label: "proxy-echo"))
        defer { listener.cancel() }

        let configuration = ProxyConfiguration(
            httpCONNECTProxy: .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: UInt16(proxyPort))!))
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: Self.parameters(through: configuration))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        #expect(await TLSInteropTests.exchange(connection, "through the proxy") == "through the proxy")
        let report = await Self.report(connection)
        #expect(report?.usedProxy == true)
        #expect(report?.proxyConfigured == true)
        #expect(report?.proxyEndpoint == .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: UInt16(proxyPort))!))
        connection.cancel()
        // The proxy saw the CONNECT for our target: the bytes did go through it.
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(logged.contains("CONNECT localhost:\(port)"), "tinyproxy log: \(logged)")
    }

    @Test("TLS runs end to end through the proxy: the server is verified, the proxy relays ciphertext")
    func tlsThroughProxy() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let (proxy, proxyPort, log) = try await Tinyproxy.start(in: directory) else { return }
        defer { proxy.stop() }
        let identity = try TLSInteropTests.Identity.make()
        guard let (server, port) = try await TLSInteropTests.startServer(identity) else { return }
        defer { server.stop() }
        let parameters = TLSInteropTests.pinned(to: try identity.certificateDER)
        let context = NWParameters.PrivacyContext(description: "tls via proxy")
        context.proxyConfigurations = [
            ProxyConfiguration(httpCONNECTProxy: .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: UInt16(proxyPort))!))
        ]
        parameters.setPrivacyContext(context)
        let connection = NWConnection(host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: parameters)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        // s_server -rev reverses each line: the TLS session is with it, not with the proxy.
        #expect(await TLSInteropTests.exchange(connection, "secret line\n") == "enil terces\n")
        let report = await Self.report(connection)
        #expect(report?.usedProxy == true)
        #expect(report?.handshakes.map(\.definition.name).contains("tls") == true)
        connection.cancel()
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(logged.contains("CONNECT localhost:\(port)"))
        #expect(!logged.contains("secret"))
    }

    @Test("a stalled proxy that allows failover is raced by DIRECT: ready in about the fallback delay")
    func directRacesAStalledProxy() async throws {
        let (listener, port) = try await TLSInteropTests.startEchoOnceListener(queue: DispatchQueue(label: "race-echo"))
        defer { listener.cancel() }
        // A "proxy" that accepts the TCP connection and never says a word.
        let stalled = try RawSocket.tcpServer()
        defer { stalled.close() }
        var configuration = ProxyConfiguration(
            httpCONNECTProxy: .hostPort(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: stalled.localPort)!))
        configuration.allowFailover = true
        let connection = NWConnection(
            host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.parameters(through: configuration))
        let started = Date()
        #expect(await TLSInteropTests.settle(connection) == .ready)
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed < SanitizerSlowdown.seconds(3), "DIRECT should join after 0.5 s, took \(elapsed) s")
        #expect(await TLSInteropTests.exchange(connection, "raced") == "raced")
        let report = await Self.report(connection)
        #expect(report?.usedProxy == false)
        #expect(report?.proxyConfigured == true)
        connection.cancel()
    }

    @Test("a proxy that cannot be reached fails the connection, unless failover allows going direct")
    func failover() async throws {
        let (listener, port) = try await TLSInteropTests.startEchoOnceListener(queue: DispatchQueue(label: "failover-echo"))
        defer { listener.cancel() }
        // Nothing listens on the proxy's port: connecting to it is refused.
        let deadPort = NWEndpoint.Port(rawValue: try freePort())!
        let strict = ProxyConfiguration(socksv5Proxy: .hostPort(host: "127.0.0.1", port: deadPort))
        let refused = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.parameters(through: strict))
        let state = await TLSInteropTests.settle(refused)
        refused.cancel()
        #expect(state != .ready, "never direct behind the user's back")

        var lenient = ProxyConfiguration(socksv5Proxy: .hostPort(host: "127.0.0.1", port: deadPort))
        lenient.allowFailover = true
        let direct = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: Self.parameters(through: lenient))
        #expect(await TLSInteropTests.settle(direct) == .ready)
        let report = await Self.report(direct)
        #expect(report?.usedProxy == false)
        #expect(report?.proxyConfigured == true)
        direct.cancel()
    }

    // MARK: - HTTPS proxies (TLS to the proxy itself)

    /// A real HTTPS proxy: socat terminates TLS with a fresh self-signed identity and hands the
    /// plaintext to tinyproxy. `stop()` ends both and removes their folder.
    struct HTTPSProxy {
        let identity: TLSInteropTests.Identity
        let port: UInt16
        let log: URL
        let directory: URL
        let processes: [PeerProcess]

        var endpoint: NWEndpoint { .hostPort(host: "localhost", port: NWEndpoint.Port(rawValue: port)!) }

        /// Nil (after recording a failure under CI) when socat or tinyproxy is missing.
        /// `certificate`/`key` (PEM files): what the proxy presents instead of a fresh
        /// self-signed identity.
        static func start(certificate: String? = nil, key: String? = nil) async throws -> HTTPSProxy? {
            let directory = try ProxyConnectionTests.temporaryDirectory()
            let identity = try TLSInteropTests.Identity.make()
            guard let socat = PeerProcess.executable("socat"),
                let (proxy, proxyPort, log) = try await Tinyproxy.start(in: directory)
            else { return nil }
            let port = try freePort()
            let front = try PeerProcess(socat, [
                "OPENSSL-LISTEN:\(port),bind=127.0.0.1,reuseaddr,fork,verify=0,"
                    + "cert=\(certificate ?? identity.certificatePath),key=\(key ?? identity.keyPath)",
                "TCP:127.0.0.1:\(proxyPort)",
            ])
            try await waitUntilBound(port: port, udp: false)
            return HTTPSProxy(identity: identity, port: port, log: log, directory: directory, processes: [front, proxy])
        }

        func stop() {
            for process in processes { process.stop() }
            try? FileManager.default.removeItem(at: directory)
        }

        var logged: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
    }

    /// TLS options that trust exactly `certificate` (the proxy's), as an app pinning its proxy would.
    static func pinnedProxyTLS(_ certificate: Data) -> NWProtocolTLS.Options {
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
            complete(trust.certificates.first?.derData == certificate)
        }, DispatchQueue(label: "proxy-verify"))
        return tls
    }

    @Test("an HTTPS proxy (tlsOptions: TLS to the proxy itself) carries the connection; the CONNECT travels encrypted")
    func httpsProxy() async throws {
        guard let proxy = try await HTTPSProxy.start() else { return }
        defer { proxy.stop() }
        let (listener, port) = try await TLSInteropTests.startEchoOnceListener(queue: DispatchQueue(label: "https-proxy-echo"))
        defer { listener.cancel() }

        let configuration = ProxyConfiguration(
            httpCONNECTProxy: proxy.endpoint,
            tlsOptions: Self.pinnedProxyTLS(try proxy.identity.certificateDER))
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: Self.parameters(through: configuration))
        #expect(await TLSInteropTests.settle(connection) == .ready)
        #expect(await TLSInteropTests.exchange(connection, "through an https proxy") == "through an https proxy")
        let report = await Self.report(connection)
        #expect(report?.usedProxy == true)
        #expect(report?.proxyEndpoint == proxy.endpoint)
        connection.cancel()
        // tinyproxy only ever sees what socat decrypted: the CONNECT reached it through TLS.
        #expect(proxy.logged.contains("CONNECT localhost:\(port)"), "tinyproxy log: \(proxy.logged)")
    }

    @Test("TLS inside TLS: end-to-end TLS to the server through an HTTPS proxy, each session verified on its own")
    func tlsThroughHTTPSProxy() async throws {
        guard let proxy = try await HTTPSProxy.start() else { return }
        defer { proxy.stop() }
        let serverIdentity = try TLSInteropTests.Identity.make()
        guard let (server, port) = try await TLSInteropTests.startServer(serverIdentity) else { return }
        defer { server.stop() }

        let parameters = TLSInteropTests.pinned(to: try serverIdentity.certificateDER)
        let context = NWParameters.PrivacyContext(description: "tls via https proxy")
        context.proxyConfigurations = [
            ProxyConfiguration(
                httpCONNECTProxy: proxy.endpoint,
                tlsOptions: Self.pinnedProxyTLS(try proxy.identity.certificateDER))
        ]
        parameters.setPrivacyContext(context)
        let connection = NWConnection(host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: parameters)
        #expect(await TLSInteropTests.settle(connection) == .ready)
        #expect(await TLSInteropTests.exchange(connection, "inner secret\n") == "terces renni\n")
        // The destination's session: its certificate, not the proxy's.
        let metadata = try #require(connection.metadata(definition: NWProtocolTLS.definition) as? NWProtocolTLS.Metadata)
        var chain: [Data] = []
        sec_protocol_metadata_access_peer_certificate_chain(metadata.securityProtocolMetadata) { chain.append($0.derData) }
        #expect(chain.first == (try serverIdentity.certificateDER))
        connection.cancel()
        #expect(proxy.logged.contains("CONNECT localhost:\(port)"))
        #expect(!proxy.logged.contains("secret"))
    }

    @Test("an HTTPS proxy whose certificate is not trusted fails with a TLS error; nothing goes in plaintext")
    func untrustedHTTPSProxyFails() async throws {
        guard let proxy = try await HTTPSProxy.start() else { return }
        defer { proxy.stop() }
        let (listener, port) = try await TLSInteropTests.startEchoOnceListener(queue: DispatchQueue(label: "https-proxy-refused"))
        defer { listener.cancel() }

        // Default TLS options: the system trust store, which does not know this self-signed proxy.
        let configuration = ProxyConfiguration(
            httpCONNECTProxy: proxy.endpoint,
            tlsOptions: NWProtocolTLS.Options())
        let connection = NWConnection(
            host: "localhost", port: NWEndpoint.Port(rawValue: port)!, using: Self.parameters(through: configuration))
        let state = await TLSInteropTests.settle(connection)
        connection.cancel()
        guard case .failed(.tls) = state else {
            Issue.record("expected failed(.tls), got \(String(describing: state))")
            return
        }
        #expect(!proxy.logged.contains("CONNECT"), "the CONNECT must not be sent to an untrusted proxy: \(proxy.logged)")
    }

    @Test("an https:// proxy from the environment is verified against the system trust store and its name")
    func httpsProxyFromTheEnvironment() async throws {
        guard let tools = try await TLSVerificationErrorTests.tools() else { return }
        let certificates = try await TLSVerificationErrorTests.Certificates.make(certtool: tools.certtool)
        defer { try? FileManager.default.removeItem(at: certificates.directory) }
        // The proxy presents the CA-signed leaf for localhost.
        guard let proxy = try await HTTPSProxy.start(certificate: certificates.path("good.pem"), key: certificates.key) else { return }
        defer { proxy.stop() }
        let (listener, port) = try await TLSInteropTests.startEchoOnceListener(queue: DispatchQueue(label: "env-https-proxy"))
        defer { listener.cancel() }
        // Loopback destinations never use environment proxies: reach the listener through one
        // of this machine's own global addresses instead.
        guard let ip = PeerProcess.executable("ip", package: "iproute2") else { return }
        let listing = try ShortTool.check(ip, ["-4", "-o", "addr", "show", "scope", "global"])
        let host = try #require(
            listing.split(separator: "\n").compactMap { line -> String? in
                let words = line.split(separator: " ")
                guard let inet = words.firstIndex(of: "inet"), inet + 1 < words.count else { return nil }
                return words[inet + 1].split(separator: "/").first.map(String.init)
            }.first, "this machine has no global IPv4 address")

        func connect(trusting bundle: String) async throws -> (status: Int32?, output: String, error: String) {
            // Standard input stays open a moment after the line: our end of stream would be the
            // TLS session's close_notify to the proxy, and socat then drops the tunnel at once.
            // (Three seconds: one was too short for two handshakes and the echo in a busy run.)
            let script = "mount --bind \"$0\" \(TLSVerificationErrorTests.systemBundle) && "
                + "{ printf 'through the environment\\047s proxy\\n'; sleep \(3 * SanitizerSlowdown.factor); } | exec \"$@\""
            return try await ToolProcess.run(
                tools.unshare, ["--mount", "--propagation", "private", "sh", "-c", script, bundle,
                                "env", "-i", "all_proxy=https://localhost:\(proxy.port)",
                                tools.nwcat, "connect", host, "\(port)"],
                timeout: 20)
        }
        // The real store lacks the CA: refused with a TLS error, and the CONNECT never sent.
        let refused = try await connect(trusting: TLSVerificationErrorTests.systemBundle)
        #expect(refused.status == 1)
        #expect(refused.error.contains("-9807"), "stderr: \(refused.error)")
        #expect(!proxy.logged.contains("CONNECT"), "tinyproxy log: \(proxy.logged)")
        // With the CA in the (namespaced) store: through the proxy.
        let trusted = try await connect(trusting: certificates.bundle)
        #expect(trusted.output == "through the environment's proxy\n", "stderr: \(trusted.error)")
        #expect(proxy.logged.contains("CONNECT \(host):\(port)"), "tinyproxy log: \(proxy.logged)")
        try TLSVerificationErrorTests.expectSystemStoreUntouched(certificates)
    }
}
