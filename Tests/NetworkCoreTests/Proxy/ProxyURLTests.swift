import Testing

@testable import NetworkCore

/// Proxy URLs as found in `http_proxy` and friends.
@Suite("Core.Proxy.URL")
struct ProxyURLTests {
    private func parse(_ text: String) throws -> ProxyDescription {
        try ProxyURL.parse(text).get()
    }

    @Test("schemes and their default ports")
    func schemes() throws {
        #expect(try parse("http://proxy.example") == ProxyDescription(
            kind: .httpCONNECT(tlsToProxy: false), server: .hostPort(host: "proxy.example", port: 80, interfaceName: nil)))
        #expect(try parse("proxy.example").kind == .httpCONNECT(tlsToProxy: false), "no scheme means http")
        #expect(try parse("HTTPS://proxy.example").server == .hostPort(host: "proxy.example", port: 443, interfaceName: nil))
        #expect(try parse("https://proxy.example").kind == .httpCONNECT(tlsToProxy: true))
        #expect(try parse("socks5://proxy.example") == ProxyDescription(
            kind: .socks5(proxyResolvesNames: false), server: .hostPort(host: "proxy.example", port: 1080, interfaceName: nil)))
        #expect(try parse("socks5h://proxy.example").kind == .socks5(proxyResolvesNames: true))
        #expect(try parse("socks://proxy.example").kind == .socks5(proxyResolvesNames: true))
    }

    @Test("ports, IPv6 literals, paths and whitespace")
    func addresses() throws {
        #expect(try parse("http://10.1.2.3:3128").server == .hostPort(host: "10.1.2.3", port: 3128, interfaceName: nil))
        #expect(try parse("socks5h://[::1]:1081").server == .hostPort(host: "::1", port: 1081, interfaceName: nil))
        #expect(try parse("http://[2001:db8::7]").server == .hostPort(host: "2001:db8::7", port: 80, interfaceName: nil))
        #expect(try parse("  http://proxy:8080/ \n").server == .hostPort(host: "proxy", port: 8080, interfaceName: nil))
        #expect(try parse("http://proxy:8080/some/path?x#y").server == .hostPort(host: "proxy", port: 8080, interfaceName: nil))
        #expect(try parse("http://proxy:/").server == .hostPort(host: "proxy", port: 80, interfaceName: nil))
    }

    @Test("user information is percent-decoded and kept out of descriptions")
    func credentials() throws {
        let proxy = try parse("http://us%65r%40corp:p%3Ass%20w%C3%B6rd@proxy:3128")
        #expect(proxy.credential == ProxyCredential(username: "user@corp", password: "p:ss wörd"))
        #expect(proxy.description == "http://<credential>@proxy:3128")
        #expect(!"\(proxy)".contains("p:ss"))
        #expect(!String(reflecting: proxy).contains("user"))
        var dumped = ""
        dump(proxy, to: &dumped)
        #expect(!dumped.contains("p:ss") && !dumped.contains("user@corp"), "dump() must not show secrets: \(dumped)")
        // An '@' in the password unencoded: the last '@' separates the host.
        #expect(try parse("socks5://u:a@b@proxy").credential == ProxyCredential(username: "u", password: "a@b"))
        #expect(try parse("socks5://justuser@proxy").credential == ProxyCredential(username: "justuser", password: ""))
        #expect(try parse("http://@proxy").credential == nil)
    }

    @Test("invalid URLs fail with EINVAL, unsupported ones with EPROTONOSUPPORT, without quoting the URL")
    func failures() {
        for bad in ["", "ftp://proxy", "http://::1:80", "http://[::1", "http://proxy:0", "http://proxy:65536",
                    "http://proxy:12ab", "http://u:%zz@proxy", "http://pro xy", "http://[10.0.0.1]:80", "http://"] {
            guard case .failure(let error) = ProxyURL.parse(bad) else {
                Issue.record("\(bad.debugDescription) parsed")
                continue
            }
            #expect(error.flowError == .posix(22), "\(bad): \(error)")
        }
        guard case .failure(let error) = ProxyURL.parse("socks4://u:secret@proxy:1080") else {
            Issue.record("socks4 parsed")
            return
        }
        #expect(error.flowError == .posix(93))
        #expect(!error.description.contains("secret"))
        if case .failure(let error) = ProxyURL.parse("http://u:secret@pro xy") {
            #expect(!error.description.contains("secret"))
        }
    }
}
