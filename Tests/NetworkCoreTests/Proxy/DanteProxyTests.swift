#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import PeerSupport
import Testing

@testable import NetworkCore

/// SOCKS5 against dante, a real proxy nobody here wrote, with curl through the same proxy as
/// an independent check of each outcome.
@Suite("Core.Proxy.Dante", .serialized)
struct DanteProxyTests {
    /// 64 KiB of varied text: big enough to need many reads each way.
    static let payload = (0..<4096).map { String($0, radix: 16).padding(toLength: 16, withPad: "-", startingAt: 0) }
        .joined() + "\n"

    @Test("no authentication: names resolved by the proxy or here, and addresses; data both ways; TLS on top; curl agrees")
    func noAuthentication() async throws {
        let directory = try ProxyPeers.temporaryDirectory("nwpx-dante")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let (echo, echoPort) = try await ProxyPeers.startEcho() else { return }
        defer { echo.stop() }
        guard let (dante, port) = try await ProxyPeers.startDante(usernameAuthentication: false, in: directory) else { return }
        defer { dante.stop() }

        let cases: [(FlowTarget, Bool)] = [
            (.hostPort(host: "localhost", port: echoPort, interfaceName: nil), true),
            (.hostPort(host: "localhost", port: echoPort, interfaceName: nil), false),
            (.hostPort(host: "127.0.0.1", port: echoPort, interfaceName: nil), true),
        ]
        for (target, remoteNames) in cases {
            let client = try await TunnelClient.open(proxyPort: port, target: target, proxy: .socks5(port: port, remoteNames: remoteNames))
            try await client.send(Self.payload)
            let echoed = try await client.waitForText("the payload echoed") { $0.count >= Self.payload.count }
            #expect(echoed == Self.payload, "\(target) via \(remoteNames ? "socks5h" : "socks5")")
            await client.close()
        }

        // A destination that refuses: the proxy's reply code becomes ECONNREFUSED.
        let closedPort = try ProxyPeers.freePort()
        do {
            _ = try await TunnelClient.open(
                proxyPort: port, target: .hostPort(host: "127.0.0.1", port: closedPort, interfaceName: nil),
                proxy: .socks5(port: port))
            Issue.record("a refused destination was reported as connected")
        } catch {
            #expect(error as? ProxyError == .socksReply(.connectionRefused))
            #expect(FlowError(error) == .posix(ECONNREFUSED))
        }

        // Independent anchor: curl through the same proxy.
        guard let (www, wwwPort) = try await ProxyPeers.startTLSServer(in: directory, ["-www"]) else { return }
        defer { www.stop() }
        #expect(try await ProxyPeers.curl(proxy: "socks5h://127.0.0.1:\(port)", "https://localhost:\(wwwPort)/") == 0)

        // The same server through our tunnel, with TLS added on top as the establishment will.
        let client = try await TunnelClient.open(
            proxyPort: port, target: .hostPort(host: "localhost", port: wwwPort, interfaceName: nil),
            proxy: .socks5(port: port))
        let settings = {
            var settings = FlowTLSConfiguration()
            settings.peerAuthenticationRequired = false  // a self-signed test certificate
            return settings
        }()
        let channel = client.channel
        _ = try await channel.eventLoop.flatSubmit {
            TLSStack.startClient(on: channel, settings: settings, hostName: "localhost")
        }.get()
        try await client.send("GET / HTTP/1.0\r\n\r\n")
        try await client.waitForText("s_server's page over TLS") { $0.hasPrefix("HTTP/1.0 200 ok") }
        // Not awaited: NIOSSL would wait for a close_notify that s_server may not send.
        channel.close(promise: nil)
    }

    @Test("user/password (RFC 1929): right password tunnels, wrong one and none fail with EACCES; curl agrees")
    func usernamePassword() async throws {
        let password = "pw-" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        try await ProxyPeers.withSystemAccount(password: password) { user in
            let directory = try ProxyPeers.temporaryDirectory("nwpx-dante-auth")
            defer { try? FileManager.default.removeItem(at: directory) }
            guard let (echo, echoPort) = try await ProxyPeers.startEcho() else { return }
            defer { echo.stop() }
            guard let (dante, port) = try await ProxyPeers.startDante(usernameAuthentication: true, in: directory) else {
                return
            }
            defer { dante.stop() }
            let target = FlowTarget.hostPort(host: "localhost", port: echoPort, interfaceName: nil)

            let client = try await TunnelClient.open(
                proxyPort: port, target: target,
                proxy: .socks5(port: port, credential: ProxyCredential(username: user, password: password)))
            try await client.send("through dante with a password\n")
            try await client.waitForText("the line echoed") { $0 == "through dante with a password\n" }
            await client.close()

            do {
                _ = try await TunnelClient.open(
                    proxyPort: port, target: target,
                    proxy: .socks5(port: port, credential: ProxyCredential(username: user, password: "wrong")))
                Issue.record("a wrong password was accepted")
            } catch {
                guard case .socksAuthenticationFailed = error as? ProxyError else {
                    Issue.record("wrong password: \(error)")
                    return
                }
                #expect(FlowError(error) == .posix(EACCES))
            }
            do {
                _ = try await TunnelClient.open(proxyPort: port, target: target, proxy: .socks5(port: port))
                Issue.record("no credential was accepted")
            } catch {
                #expect(error as? ProxyError == .socksNoAcceptableMethod)
                #expect(FlowError(error) == .posix(EACCES))
            }

            guard let (www, wwwPort) = try await ProxyPeers.startTLSServer(in: directory, ["-www"]) else { return }
            defer { www.stop() }
            let url = "https://localhost:\(wwwPort)/"
            #expect(try await ProxyPeers.curl(proxy: "socks5h://\(user):\(password)@127.0.0.1:\(port)", url) == 0)
            #expect(try await ProxyPeers.curl(proxy: "socks5h://\(user):wrong@127.0.0.1:\(port)", url) == 97)
            #expect(try await ProxyPeers.curl(proxy: "socks5h://127.0.0.1:\(port)", url) == 97)
        }
    }
}
