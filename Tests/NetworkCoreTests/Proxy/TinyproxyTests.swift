#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import PeerSupport
import Testing

@testable import NetworkCore

/// HTTP CONNECT against tinyproxy, a real proxy nobody here wrote, with curl through the same
/// proxy as an independent check of each outcome.
@Suite("Core.Proxy.Tinyproxy", .serialized)
struct TinyproxyTests {
    @Test("open proxy: names and addresses, data both ways; curl agrees")
    func open() async throws {
        let directory = try ProxyPeers.temporaryDirectory("nwpx-tinyproxy")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let (echo, echoPort) = try await ProxyPeers.startEcho() else { return }
        defer { echo.stop() }
        guard let (proxy, port, log) = try await ProxyPeers.startTinyproxy(basicAuth: nil, in: directory) else { return }
        defer { proxy.stop() }

        for host in ["localhost", "127.0.0.1"] {
            let client = try await TunnelClient.open(
                proxyPort: port, target: .hostPort(host: host, port: echoPort, interfaceName: nil),
                proxy: .httpCONNECT(port: port))
            try await client.send(DanteProxyTests.payload)
            let echoed = try await client.waitForText("the payload echoed") { $0.count >= DanteProxyTests.payload.count }
            #expect(echoed == DanteProxyTests.payload, "via \(host)")
            await client.close()
        }
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(logged.contains("CONNECT localhost:\(echoPort) HTTP/1.1"), "the request line tinyproxy saw")

        guard let (www, wwwPort) = try await ProxyPeers.startTLSServer(in: directory, ["-www"]) else { return }
        defer { www.stop() }
        #expect(try await ProxyPeers.curl(proxy: "http://127.0.0.1:\(port)", "https://localhost:\(wwwPort)/") == 0)
    }

    @Test("BasicAuth: 407 without or with wrong credentials is EACCES; right ones tunnel; curl agrees")
    func basicAuthentication() async throws {
        let directory = try ProxyPeers.temporaryDirectory("nwpx-tinyproxy-auth")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let (echo, echoPort) = try await ProxyPeers.startEcho() else { return }
        defer { echo.stop() }
        guard let (proxy, port, _) = try await ProxyPeers.startTinyproxy(basicAuth: ("proxyuser", "s3cret"), in: directory)
        else { return }
        defer { proxy.stop() }
        let target = FlowTarget.hostPort(host: "127.0.0.1", port: echoPort, interfaceName: nil)

        do {
            _ = try await TunnelClient.open(proxyPort: port, target: target, proxy: .httpCONNECT(port: port))
            Issue.record("CONNECT without credentials succeeded")
        } catch {
            #expect(error as? ProxyError == .httpProxyAuthenticationRequired(credentialSent: false))
            #expect(FlowError(error) == .posix(EACCES))
            #expect("\(error)".contains("requires authentication"))
        }
        do {
            _ = try await TunnelClient.open(
                proxyPort: port, target: target,
                proxy: .httpCONNECT(port: port, credential: ProxyCredential(username: "proxyuser", password: "nope")))
            Issue.record("CONNECT with a wrong password succeeded")
        } catch {
            #expect(error as? ProxyError == .httpProxyAuthenticationRequired(credentialSent: true))
        }
        let client = try await TunnelClient.open(
            proxyPort: port, target: target,
            proxy: .httpCONNECT(port: port, credential: ProxyCredential(username: "proxyuser", password: "s3cret")))
        try await client.send("authorised\n")
        try await client.waitForText("the line echoed") { $0 == "authorised\n" }
        await client.close()

        guard let (www, wwwPort) = try await ProxyPeers.startTLSServer(in: directory, ["-www"]) else { return }
        defer { www.stop() }
        let url = "https://localhost:\(wwwPort)/"
        #expect(try await ProxyPeers.curl(proxy: "http://127.0.0.1:\(port)", url) != 0)
        #expect(try await ProxyPeers.curl(proxy: "http://proxyuser:s3cret@127.0.0.1:\(port)", url) == 0)
    }

    /// TLS runs end to end through the tunnel: the proxy is asked for an address only, the
    /// server name travels in the ClientHello (which `-servername_fatal` makes s_server check),
    /// and application data crosses the proxy encrypted. A socat relay between the proxy and
    /// the server records every byte on the proxy's far side.
    @Test("TLS to openssl s_server through CONNECT: SNI inside TLS only, payload never in clear")
    func endToEndTLS() async throws {
        let directory = try ProxyPeers.temporaryDirectory("nwpx-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let serverName = "secret-sni.test"
        guard let (server, serverPort) = try await ProxyPeers.startTLSServer(in: directory, [
            "-servername", serverName, "-servername_fatal", "-cert2", directory.appendingPathComponent("cert.pem").path,
            "-key2", directory.appendingPathComponent("key.pem").path, "-rev",
        ]) else { return }
        defer { server.stop() }
        guard let (relay, relayPort, toServer, toClient) = try await ProxyPeers.startRecordingRelay(to: serverPort, in: directory)
        else { return }
        defer { relay.stop() }
        guard let (proxy, port, log) = try await ProxyPeers.startTinyproxy(basicAuth: nil, in: directory) else { return }
        defer { proxy.stop() }

        let client = try await TunnelClient.open(
            proxyPort: port, target: .hostPort(host: "127.0.0.1", port: relayPort, interfaceName: nil),
            proxy: .httpCONNECT(port: port))
        let settings = {
            var settings = FlowTLSConfiguration()
            settings.peerAuthenticationRequired = false  // a self-signed test certificate
            return settings
        }()
        let channel = client.channel
        let facts = try await channel.eventLoop.flatSubmit {
            TLSStack.startClient(on: channel, settings: settings, hostName: serverName)
        }.get()
        #expect(facts.version == 0x0304)
        let marker = "marker-plaintext-\(UInt32.random(in: 0..<UInt32.max))"
        try await client.send(marker + "\n")
        try await client.waitForText("the reversed line") { $0 == String(marker.reversed()) + "\n" }
        // Not awaited: s_server does not answer close_notify, so NIOSSL would wait out its
        // five-second shutdown timeout.
        client.channel.close(promise: nil)
        relay.stop()

        let forward = (try? Data(contentsOf: toServer)) ?? Data()
        let backward = (try? Data(contentsOf: toClient)) ?? Data()
        #expect(forward.count > 100, "the relay recorded the client's side")
        #expect(forward.range(of: Data(serverName.utf8)) != nil, "the name is in the ClientHello")
        #expect(forward.range(of: Data(marker.utf8)) == nil, "application data crossed encrypted")
        #expect(backward.range(of: Data(String(marker.reversed()).utf8)) == nil)
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(logged.contains("CONNECT 127.0.0.1:\(relayPort) HTTP/1.1"))
        #expect(!logged.contains(serverName), "the proxy was never told the server name")

        // Independent anchor: openssl's own client through the same proxy (HTTP CONNECT).
        guard let openssl = PeerProcess.executable("openssl") else { return }
        let anchor = try PeerProcess(openssl, [
            "s_client", "-proxy", "127.0.0.1:\(port)", "-connect", "127.0.0.1:\(serverPort)",
            "-servername", serverName, "-quiet",
        ], input: Data("anchor\n".utf8))
        defer { anchor.stop() }
        try await anchor.waitForOutput(containing: "rohcna")
    }
}
