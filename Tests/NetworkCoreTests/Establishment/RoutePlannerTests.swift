import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import NetworkCore

/// Step 2 of establishment: which routes a connection tries, from the environment and PAC files.
@Suite("Core.RoutePlanner")
struct RoutePlannerTests {
    static let loop = MultiThreadedEventLoopGroup.singleton.next()

    static func configuration(_ host: String, port: Int = 443, tls: Bool = false) -> FlowConfiguration {
        var configuration = FlowConfiguration(target: .hostPort(host: host, port: port, interfaceName: nil))
        if tls { configuration.tls = FlowTLSConfiguration() }
        return configuration
    }

    static func pacFile(_ script: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("routes-\(UUID().uuidString).pac").path
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a pac+ proxy variable names a PAC file, which picks routes per host, in its order")
    func pacChoosesPerHost() async throws {
        let path = try Self.pacFile("""
            function FindProxyForURL(url, host) {
              if (dnsDomainIs(host, ".corp.test")) return "PROXY 10.1.1.1:3128; SOCKS5 10.1.1.2:1080; DIRECT";
              if (url.substring(0, 6) == "https:") return "HTTPS 10.1.1.3:443; DIRECT";
              return "DIRECT";
            }
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let environment = ProxyEnvironment(["all_proxy": "pac+" + path])
        let corp = try await RoutePlanner.routes(for: Self.configuration("www.corp.test"), on: Self.loop, environment: environment).get()
        #expect(corp.map(\.description).count == 3)
        guard corp.count == 3, case .proxy(let first) = corp[0], case .proxy(let second) = corp[1] else {
            Issue.record("routes \(corp)")
            return
        }
        #expect(first.kind == .httpCONNECT(tlsToProxy: false))
        #expect(first.server == .hostPort(host: "10.1.1.1", port: 3128, interfaceName: nil))
        #expect(second.kind == .socks5(proxyResolvesNames: true))
        #expect(corp[2] == .direct)
        // An HTTPS choice is an HTTP CONNECT proxy spoken to over TLS.
        let secure = try await RoutePlanner.routes(for: Self.configuration("example.test", tls: true), on: Self.loop, environment: environment).get()
        #expect(secure == [
            .proxy(ProxyDescription(kind: .httpCONNECT(tlsToProxy: true), server: .hostPort(host: "10.1.1.3", port: 443, interfaceName: nil))),
            .direct,
        ])
        let other = try await RoutePlanner.routes(for: Self.configuration("example.test"), on: Self.loop, environment: environment).get()
        #expect(other == [.direct])
    }

    @Test("preferNoProxies puts direct first; a broken PAC file means direct")
    func preferencesAndFailures() async throws {
        let path = try Self.pacFile("function FindProxyForURL(url, host) { return \"PROXY 10.1.1.1:3128\"; }")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = Self.configuration("a.test")
        configuration.preferNoProxies = true
        let preferred = try await RoutePlanner.routes(
            for: configuration, on: Self.loop, environment: ProxyEnvironment(["https_proxy": "pac+" + path, "http_proxy": "pac+" + path])
        ).get()
        #expect(preferred.first == .direct)
        #expect(preferred.count == 2)
        let broken = try Self.pacFile("function FindProxyForURL(url, host) { this is not javascript")
        defer { try? FileManager.default.removeItem(atPath: broken) }
        let fallback = try await RoutePlanner.routes(
            for: Self.configuration("a.test"), on: Self.loop, environment: ProxyEnvironment(["all_proxy": "pac+" + broken])
        ).get()
        #expect(fallback == [.direct])
    }

    @Test("plain proxy variables and UDP")
    func environmentAndUDP() async throws {
        let environment = ProxyEnvironment(["all_proxy": "socks5h://10.2.2.2:1080"])
        let routes = try await RoutePlanner.routes(for: Self.configuration("a.test"), on: Self.loop, environment: environment).get()
        guard case .proxy(let proxy) = routes.first else {
            Issue.record("routes \(routes)")
            return
        }
        #expect(proxy.server == .hostPort(host: "10.2.2.2", port: 1080, interfaceName: nil))
        var udp = Self.configuration("a.test")
        udp.transport = .udp
        #expect(try await RoutePlanner.routes(for: udp, on: Self.loop, environment: environment).get() == [.direct])
    }
}
