import Testing

@testable import NetworkCore

/// `no_proxy` matching.
@Suite("Core.Proxy.NoProxy")
struct NoProxyListTests {
    @Test("* bypasses everything")
    func star() {
        #expect(NoProxyList("*").bypasses(host: "anything.example", port: 443))
        #expect(NoProxyList(" * ").bypasses(host: "192.0.2.1", port: 1))
        #expect(!NoProxyList("").bypasses(host: "example.com", port: 80))
    }

    @Test("domains match themselves and their subdomains, with or without a leading dot")
    func domains() {
        for spelling in ["example.com", ".example.com", "*.example.com", "EXAMPLE.com.", "  example.com , other"] {
            let list = NoProxyList(spelling)
            #expect(list.bypasses(host: "example.com", port: 443), "\(spelling)")
            #expect(list.bypasses(host: "www.Example.COM", port: 443), "\(spelling)")
            #expect(list.bypasses(host: "a.b.example.com.", port: 443), "\(spelling)")
            #expect(!list.bypasses(host: "notexample.com", port: 443), "\(spelling)")
            #expect(!list.bypasses(host: "example.com.evil.net", port: 443), "\(spelling)")
        }
        #expect(NoProxyList("intranet").bypasses(host: "intranet", port: 80))
    }

    @Test("address literals and CIDR ranges, IPv4 and IPv6")
    func addresses() {
        let list = NoProxyList("192.0.2.7, 10.0.0.0/8,fd00::/8 2001:db8::1,[2001:db8::2] 172.16.0.0/12")
        #expect(list.bypasses(host: "192.0.2.7", port: 80))
        #expect(!list.bypasses(host: "192.0.2.8", port: 80))
        #expect(list.bypasses(host: "10.200.3.4", port: 80))
        #expect(!list.bypasses(host: "11.0.0.1", port: 80))
        #expect(list.bypasses(host: "172.31.255.255", port: 80))
        #expect(!list.bypasses(host: "172.32.0.0", port: 80))
        #expect(list.bypasses(host: "fd12:3456::1", port: 80))
        #expect(list.bypasses(host: "[fd12:3456::1]", port: 80))
        #expect(!list.bypasses(host: "fe80::1", port: 80))
        #expect(list.bypasses(host: "2001:db8:0:0::1", port: 80), "compared as addresses, not text")
        #expect(list.bypasses(host: "2001:db8::2", port: 80))
        #expect(NoProxyList("0.0.0.0/0").bypasses(host: "198.51.100.1", port: 1))
        // Names are not resolved to match address entries, and text suffixes of addresses
        // are not domains.
        #expect(!list.bypasses(host: "ten.example", port: 80))
        #expect(!NoProxyList("0.7").bypasses(host: "192.0.0.7", port: 80))
    }

    @Test("host:port entries apply to that port only")
    func ports() {
        let list = NoProxyList("example.com:8080, 192.0.2.1:443, [2001:db8::1]:22")
        #expect(list.bypasses(host: "example.com", port: 8080))
        #expect(list.bypasses(host: "api.example.com", port: 8080))
        #expect(!list.bypasses(host: "example.com", port: 443))
        #expect(list.bypasses(host: "192.0.2.1", port: 443))
        #expect(!list.bypasses(host: "192.0.2.1", port: 80))
        #expect(list.bypasses(host: "2001:db8::1", port: 22))
        #expect(!list.bypasses(host: "2001:db8::1", port: 23))
    }

    @Test("malformed entries are ignored")
    func malformed() {
        let list = NoProxyList("10.0.0.0/33, bad:port, [::1, fd00::/129, :80, ., ,")
        #expect(list.isEmpty)
        #expect(!list.bypasses(host: "10.0.0.1", port: 80))
    }
}
