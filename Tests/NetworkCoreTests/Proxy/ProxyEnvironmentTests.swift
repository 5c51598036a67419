import Testing

@testable import NetworkCore

/// Which proxy environment variables apply, and how.
@Suite("Core.Proxy.Environment")
struct ProxyEnvironmentTests {
    private func proxy(_ variables: [String: String], host: String = "example.com", port: Int = 443, secure: Bool = true)
        throws -> ProxyDescription?
    {
        try ProxyEnvironment(variables).proxy(forHost: host, port: port, secure: secure).get()
    }

    @Test("https_proxy for TLS connections, http_proxy for the others, all_proxy as fallback")
    func choice() throws {
        let variables = ["https_proxy": "http://secure:1", "http_proxy": "http://plain:2", "all_proxy": "socks5h://all:3"]
        #expect(try proxy(variables, secure: true)?.server == .hostPort(host: "secure", port: 1, interfaceName: nil))
        #expect(try proxy(variables, secure: false)?.server == .hostPort(host: "plain", port: 2, interfaceName: nil))
        #expect(try proxy(["all_proxy": "socks5h://all:3"], secure: true)?.kind == .socks5(proxyResolvesNames: true))
        #expect(try proxy(["http_proxy": "http://plain:2"], secure: true) == nil, "http_proxy is not for TLS")
        #expect(try proxy([:]) == nil)
    }

    @Test("lower case wins; empty counts as unset; upper case is the fallback")
    func caseRules() throws {
        #expect(try proxy(["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2"])?.server
            == .hostPort(host: "lower", port: 1, interfaceName: nil))
        #expect(try proxy(["https_proxy": "", "HTTPS_PROXY": "http://upper:2"])?.server
            == .hostPort(host: "upper", port: 2, interfaceName: nil))
        #expect(try proxy(["ALL_PROXY": "http://upper:3"])?.server == .hostPort(host: "upper", port: 3, interfaceName: nil))
        #expect(try proxy(["NO_PROXY": "example.com", "https_proxy": "http://p:1"]) == nil)
        #expect(try proxy(["no_proxy": "other.com", "NO_PROXY": "example.com", "https_proxy": "http://p:1"]) != nil,
                "lower-case no_proxy wins")
    }

    @Test("HTTP_PROXY is ignored under CGI (httpoxy), http_proxy is not")
    func httpoxy() throws {
        #expect(try proxy(["HTTP_PROXY": "http://evil:1", "REQUEST_METHOD": "GET"], secure: false) == nil)
        #expect(try proxy(["http_proxy": "http://fine:1", "REQUEST_METHOD": "GET"], secure: false) != nil)
        #expect(try proxy(["HTTP_PROXY": "http://fine:1"], secure: false) != nil)
    }

    @Test("no_proxy and loopback go direct")
    func bypass() throws {
        let variables = ["all_proxy": "http://p:1", "no_proxy": ".corp.example,10.0.0.0/8"]
        #expect(try proxy(variables, host: "db.corp.example") == nil)
        #expect(try proxy(variables, host: "10.1.1.1") == nil)
        #expect(try proxy(variables, host: "example.org") != nil)
        for loopback in ["localhost", "LOCALHOST.", "api.localhost", "127.0.0.1", "127.9.9.9", "::1", "[::1]"] {
            #expect(try proxy(["all_proxy": "http://p:1"], host: loopback) == nil, "\(loopback)")
        }
    }

    @Test("an unusable proxy URL fails the connection instead of going direct")
    func invalid() {
        let result = ProxyEnvironment(["https_proxy": "gopher://p:1"]).proxy(forHost: "example.com", port: 443, secure: true)
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.flowError == .posix(22))
    }
}
