import Testing
@testable import NetworkPAC

/// Reading `FindProxyForURL` answers: keyword mapping, order, forgiveness, and the fall back to
/// DIRECT when nothing is usable.
@Suite struct PACProxyChoiceParsingTests {
    @Test func everyKeywordInOrder() {
        let answer = "PROXY a.test:1; SOCKS5 b.test:2; SOCKS c.test:3; HTTP d.test:4; HTTPS e.test:5; SOCKS4 f.test:6; DIRECT"
        #expect(PACProxyChoice.parse(answer) == [
            .httpConnect(host: "a.test", port: 1),
            .socks5(host: "b.test", port: 2),
            .socks5(host: "c.test", port: 3),
            .httpConnect(host: "d.test", port: 4),
            .httpsConnect(host: "e.test", port: 5),
            .socks4(host: "f.test", port: 6),
            .direct,
        ])
    }

    @Test func spacingCaseAndEmptyEntriesAreForgiven() {
        #expect(PACProxyChoice.parse("  proxy \t a.test:8080 ;;Direct;  ") == [.httpConnect(host: "a.test", port: 8080), .direct])
        #expect(PACProxyChoice.parse("socks5 127.0.0.1:1080;") == [.socks5(host: "127.0.0.1", port: 1080)])
    }

    /// CRLF is one Character in Swift, neither "\r" nor "\n": it must separate words all the same.
    @Test func crlfSeparatesLikeOtherWhitespace() {
        #expect(PACProxyChoice.parse("PROXY a.test:1\r\n; DIRECT\r\n") == [.httpConnect(host: "a.test", port: 1), .direct])
        #expect(PACProxyChoice.parse("SOCKS5\r\nb.test") == [.socks5(host: "b.test", port: 1080)])
    }

    @Test(arguments: ["", "   ", ";;", "FOO bar:1", "PROXY", "PROXY :80", "PROXY h:0", "PROXY h:65536", "PROXY h:abc",
                      "PROXY h:1 extra", "DIRECT now", "PROXY h:-1", "PROXY a:b:c", "PROXY h\u{e9}:80", "PROXY [::1",
                      "PROXY [::1]x", "PROXY [host]:80", "QUIC h:443"])
    func garbageAloneMeansDirect(answer: String) {
        #expect(PACProxyChoice.parse(answer) == [.direct])
    }

    @Test func garbageIsSkippedAndTheRestKept() {
        #expect(PACProxyChoice.parse("nonsense; PROXY ok.test:3128; PROXY bad:99999; SOCKS5 s.test:1080")
            == [.httpConnect(host: "ok.test", port: 3128), .socks5(host: "s.test", port: 1080)])
    }

    @Test func ipv6LiteralsNeedBrackets() {
        #expect(PACProxyChoice.parse("PROXY [::1]:3128; SOCKS5 [fe80::1%eth0]:1080; PROXY ::1:3128") == [
            .httpConnect(host: "::1", port: 3128),
            .socks5(host: "fe80::1%eth0", port: 1080),
        ])
    }

    @Test func missingPortsTakeTheSchemeDefault() {
        #expect(PACProxyChoice.parse("PROXY h.test; HTTPS h.test; SOCKS h.test; SOCKS4 [::1]") == [
            .httpConnect(host: "h.test", port: 80),
            .httpsConnect(host: "h.test", port: 443),
            .socks5(host: "h.test", port: 1080),
            .socks4(host: "::1", port: 1080),
        ])
    }

    @Test func repeatedEntriesCountOnce() {
        #expect(PACProxyChoice.parse("PROXY a:1; DIRECT; proxy a:1; DIRECT") == [.httpConnect(host: "a", port: 1), .direct])
    }

    @Test func descriptionWritesPACSyntaxBack() {
        let choices: [PACProxyChoice] = [
            .direct, .httpConnect(host: "a", port: 1), .httpsConnect(host: "::1", port: 2),
            .socks5(host: "b", port: 3), .socks4(host: "c", port: 4),
        ]
        let text = choices.map(\.description).joined(separator: "; ")
        #expect(text == "DIRECT; PROXY a:1; HTTPS [::1]:2; SOCKS5 b:3; SOCKS4 c:4")
        #expect(PACProxyChoice.parse(text) == choices)
    }
}
