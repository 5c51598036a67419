import NIOCore
import Testing

@testable import NetworkCore

/// Establishment step 2: the routes to try.
@Suite("Core.Proxy.Selection")
struct ProxySelectionTests {
    private let target = FlowTarget.hostPort(host: "www.example.com", port: 443, interfaceName: nil)
    private let socks = ProxyDescription(
        kind: .socks5(proxyResolvesNames: true), server: .hostPort(host: "127.0.0.1", port: 1080, interfaceName: nil))
    private let http = ProxyDescription(
        kind: .httpCONNECT(tlsToProxy: false), server: .hostPort(host: "127.0.0.1", port: 3128, interfaceName: nil))

    private func routes(
        _ target: FlowTarget? = nil, transport: FlowTransportKind = .tcp, configured: [ProxyDescription] = [],
        environment: [String: String]? = nil, preferNoProxies: Bool = false
    ) -> Result<[ProxyRoute], FlowError> {
        ProxySelection.routes(
            to: target ?? self.target, transport: transport, secure: true, configured: configured,
            environment: environment.map(ProxyEnvironment.init), preferNoProxies: preferNoProxies)
    }

    @Test("configured proxies win over the environment; domains filter them")
    func configured() throws {
        #expect(try routes(configured: [socks], environment: ["all_proxy": "http://env:1"]).get() == [.proxy(socks)])
        var excluded = socks
        excluded.excludedDomains = ["example.com"]
        #expect(try routes(configured: [excluded, http]).get() == [.proxy(http)])
        var matching = http
        matching.matchDomains = ["other.example"]
        #expect(try routes(configured: [matching], environment: ["all_proxy": "http://env:1"]).get() == [.direct],
                "a configured list that does not apply means direct, not the environment")
    }

    @Test("failover appends direct; preferNoProxies puts it first")
    func ordering() throws {
        var failover = socks
        failover.allowFailover = true
        #expect(try routes(configured: [failover, http]).get() == [.proxy(failover), .proxy(http), .direct])
        #expect(try routes(configured: [http], preferNoProxies: true).get() == [.direct, .proxy(http)])
    }

    @Test("an unsupported proxy fails unless failover is allowed")
    func unsupported() throws {
        var relay = ProxyDescription(kind: .unsupported("MASQUE relays"), server: .unix(path: ""))
        #expect(throws: FlowError.posix(93)) { try routes(configured: [relay]).get() }
        #expect(try routes(configured: [http, relay]).get() == [.proxy(http)])
        relay.allowFailover = true
        #expect(try routes(configured: [relay]).get() == [.direct])
    }

    @Test("environment, UDP, UNIX and address targets")
    func environmentAndKinds() throws {
        let environment = ["https_proxy": "socks5h://proxy:1080"]
        let expected = ProxyDescription(
            kind: .socks5(proxyResolvesNames: true), server: .hostPort(host: "proxy", port: 1080, interfaceName: nil))
        #expect(try routes(environment: environment).get() == [.proxy(expected)])
        #expect(try routes(environment: nil).get() == [.direct])
        #expect(try routes(transport: .udp, configured: [socks]).get() == [.direct])
        #expect(try routes(.unix(path: "/tmp/x"), configured: [socks]).get() == [.direct])
        let address = try SocketAddress(ipAddress: "192.0.2.1", port: 443)
        #expect(try routes(.address(address), environment: ["https_proxy": "http://p:1", "no_proxy": "192.0.2.0/24"]).get()
                == [.direct])
        #expect(throws: FlowError.posix(22)) { try routes(environment: ["https_proxy": "http://p:99999"]).get() }
    }
}
