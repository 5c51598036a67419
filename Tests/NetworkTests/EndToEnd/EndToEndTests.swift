import Foundation
import PeerSupport
import Testing

/// The built `nwcat` against real peers in network namespaces the tests make themselves
/// (`EndToEndLab`): a name with AAAA and A whose IPv6 is silently dropped, a destination that
/// drops everything, dnsmasq with a search domain, dante and tinyproxy, a PAC file. Each test
/// runs curl (or pactester) in the same namespace against the same peers as an independent
/// anchor, so a broken lab cannot pass as a working engine.
///
/// Timing bounds are wide (a loaded two-core machine, a debug build); the measured values
/// are printed. Serialized: the timings should not compete with each other.
@Suite("EndToEnd.Namespaces", .serialized)
struct EndToEndTests {
    static let http = "http://dual.test:\(EndToEndLab.httpPort)/"
    static let port = String(EndToEndLab.httpPort)
    static let ipv4Endpoint = "\(EndToEndLab.serverIPv4):\(EndToEndLab.httpPort)"
    static let ipv6Endpoint = "[\(EndToEndLab.serverIPv6)]:\(EndToEndLab.httpPort)"

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }

    @Test("IPv6 silently dropped while the name has AAAA and A: ready through IPv4 one attempt delay later; curl falls back too")
    func ipv6BlackholeFallsBackToIPv4() async throws {
        guard let lab = try await EndToEndLab.make() else { return }
        defer { lab.tearDown() }
        try await lab.blackhole(.ipv6)

        let ours = try await lab.nwcat(["dual.test", Self.port])
        #expect(ours.status == 0, "nwcat: \(ours.standardError)")
        let duration = try #require(ours.duration, "no timing line: \(ours.standardError)")
        #expect(ours.timing["endpoints"] == "2")
        #expect(ours.timing["preferred"] == Self.ipv6Endpoint, "IPv6 ranks first (2001:db8::/32 beats IPv4 under RFC 6724)")
        #expect(ours.timing["used"] == Self.ipv4Endpoint, "\(ours.timing)")
        #expect(ours.timing["proxy"] == "none")
        // The IPv4 attempt starts one connection attempt delay (250 ms) after the IPv6 one:
        // not earlier (the IPv6 attempt had its chance), and not much later (no waiting for
        // the IPv6 SYN to time out). The issue's target is 300 ms plus the RTT; the bound
        // here leaves room for a loaded machine.
        #expect(duration >= 0.245, "ready in \(Self.milliseconds(duration)): IPv4 started before the attempt delay")
        #expect(duration < SanitizerSlowdown.seconds(1.0), "ready in \(Self.milliseconds(duration))")
        if let started = ours.timing["attempt_started_after"].flatMap(Double.init) {
            #expect(started >= 0.245 && started < SanitizerSlowdown.seconds(1.0), "the winning attempt started after \(Self.milliseconds(started))")
        }

        // The anchor: curl's Happy Eyeballs (200 ms) in the same namespace, same name, same server.
        let anchor = try await lab.curl([], url: Self.http)
        #expect(anchor.status == 0 && anchor.httpCode == "200", "curl: \(anchor.standardError)")
        #expect(anchor.remoteIP == EndToEndLab.serverIPv4, "curl also ended on IPv4: the blackhole is real")
        #expect(anchor.timeConnect >= 0.15, "curl waited for IPv6 first (time_connect \(anchor.timeConnect) s)")
        print("""
            E2E Happy Eyeballs, IPv6 blackholed: nwcat ready via IPv4 in \(Self.milliseconds(duration)) \
            (resolution \(ours.timing["resolution_duration"].flatMap(Double.init).map(Self.milliseconds) ?? "?")); \
            curl time_connect \(Self.milliseconds(anchor.timeConnect)); ratio \(String(format: "%.2f", duration / anchor.timeConnect))
            """)
    }

    @Test("every address dropped: the connection is waiting(ETIMEDOUT) after about 2 s (nwcat --timeout 2 then gives up) instead of hanging; curl --connect-timeout 2 agrees")
    func everythingDroppedEndsAtTheTimeout() async throws {
        guard let lab = try await EndToEndLab.make() else { return }
        defer { lab.tearDown() }
        try await lab.blackhole(.everything)

        let ours = try await lab.nwcat(["--timeout", "2", "dual.test", Self.port], timeout: 30)
        #expect(ours.status == 1, "nwcat must end with a failure, not hang or succeed: \(ours.standardError)")
        #expect(ours.standardError.contains("waiting (POSIXErrorCode(rawValue: 110)"), "waiting(ETIMEDOUT): \(ours.standardError)")
        #expect(ours.elapsed >= 1.9, "the timeout was cut short: \(ours.elapsed) s")
        #expect(ours.elapsed < SanitizerSlowdown.seconds(5), "ended \(ours.elapsed) s after start for a 2 s timeout")

        let anchor = try await lab.curl(["--connect-timeout", "2"], url: Self.http, timeout: 30)
        #expect(anchor.status == 28, "curl timed out too (exit 28): \(anchor.standardError)")
        print("E2E all dropped: nwcat --timeout 2 exited after \(String(format: "%.2f", ours.elapsed)) s (whole process)")
    }

    @Test("dnsmasq with `search test`: nwcat connect dual resolves dual.test (both families asked, from the client), the report shows it")
    func searchDomainThroughDnsmasq() async throws {
        guard let lab = try await EndToEndLab.make() else { return }
        defer { lab.tearDown() }

        let ours = try await lab.nwcat(["dual", Self.port])
        #expect(ours.status == 0, "nwcat: \(ours.standardError)")
        #expect(ours.timing["resolution_source"] == "query", "\(ours.timing)")
        // One or two: when the AAAA answer comes first, its attempt may win before the A
        // answer is counted.
        #expect(["1", "2"].contains(ours.timing["endpoints"]), "\(ours.timing)")
        #expect(ours.timing["used"] == Self.ipv6Endpoint, "nothing blocked: IPv6 first and it works")
        #expect(ours.standardError.contains("resolution query"), "the readable report shows the resolution")
        // The questions reached dnsmasq with the search domain applied, from the client side.
        let log = lab.directory.appendingPathComponent("dnsmasq.log")
        try await Self.waitForLine(in: log, containing: "query[AAAA] dual.test from \(EndToEndLab.clientIPv4)")
        try await Self.waitForLine(in: log, containing: "query[A] dual.test from \(EndToEndLab.clientIPv4)")

        // The anchor: glibc's resolver (through curl) applies the same search list.
        let anchor = try await lab.curl([], url: "http://dual:\(EndToEndLab.httpPort)/")
        #expect(anchor.status == 0 && anchor.httpCode == "200", "curl: \(anchor.standardError)")
        #expect(anchor.remoteIP == EndToEndLab.serverIPv6)
    }

    @Test("--ipv4 and --ipv6 keep to one family on the dual-stack name; --ipv6 does not fall back to IPv4 past a blackhole")
    func ipVersionRestriction() async throws {
        guard let lab = try await EndToEndLab.make() else { return }
        defer { lab.tearDown() }

        let v4 = try await lab.nwcat(["-4", "dual.test", Self.port])
        #expect(v4.status == 0 && v4.timing["used"] == Self.ipv4Endpoint && v4.timing["endpoints"] == "1", "\(v4.standardError)")
        let v6 = try await lab.nwcat(["-6", "dual.test", Self.port])
        #expect(v6.status == 0 && v6.timing["used"] == Self.ipv6Endpoint && v6.timing["endpoints"] == "1", "\(v6.standardError)")

        try await lab.blackhole(.ipv6)
        let stuck = try await lab.nwcat(["-6", "--timeout", "1", "dual.test", Self.port], timeout: 30)
        #expect(stuck.status == 1 && stuck.standardError.contains("rawValue: 110"), "\(stuck.standardError)")
        let anchor = try await lab.curl(["-6", "--connect-timeout", "1"], url: Self.http, timeout: 30)
        #expect(anchor.status == 28, "curl -6 times out on the same blackhole: \(anchor.standardError)")
    }

    @Test("SOCKS5 through dante without authentication: the proxy resolves the name (no query from the client), the report names it; curl socks5h agrees")
    func socksWithoutAuthentication() async throws {
        guard let lab = try await EndToEndLab.make() else { return }
        defer { lab.tearDown() }
        try await lab.startDante(usernameAuthentication: false)
        let proxy = "\(EndToEndLab.serverIPv4):\(EndToEndLab.socksPort)"

        let ours = try await lab.nwcat(["--proxy", "socks5://\(proxy)", "dual.test", Self.port])
        #expect(ours.status == 0, "nwcat: \(ours.standardError)")
        #expect(ours.timing["proxy"] == proxy, "\(ours.timing)")
        #expect(ours.standardError.contains("proxy \(proxy)"), "the readable report names the proxy")
        #expect(ours.timing["resolution_source"] == nil, "the proxy resolved dual.test, not nwcat: \(ours.timing)")
        // dante's own log: it passed a connection from the client to the server.
        try await Self.waitForLine(in: lab.directory.appendingPathComponent("danted-\(EndToEndLab.socksPort).log"),
                                   containing: "tcp/connect [: \(EndToEndLab.clientIPv4).")
        #expect(!lab.dnsLog.contains("dual.test from \(EndToEndLab.clientIPv4)"), "the client asked DNS itself: \(lab.dnsLog)")

        let anchor = try await lab.curl(["--proxy", "socks5h://\(proxy)"], url: Self.http)
        #expect(anchor.status == 0 && anchor.httpCode == "200", "curl: \(anchor.standardError)")
        if let duration = ours.duration {
            print("E2E SOCKS5 (dante): nwcat ready in \(Self.milliseconds(duration)); curl time_pretransfer \(Self.milliseconds(anchor.timePretransfer))")
        }
    }

    @Test("SOCKS5 through dante with user/password (RFC 1929, a throwaway system account): right password works, a wrong one fails with EACCES; curl agrees")
    func socksWithAuthentication() async throws {
        guard let lab = try await EndToEndLab.make() else { return }
        defer { lab.tearDown() }
        try await withSystemAccount(password: "e2e-s3cret") { user in
            try await lab.startDante(usernameAuthentication: true)
            let proxy = "\(EndToEndLab.serverIPv4):\(EndToEndLab.socksAuthPort)"

            let ours = try await lab.nwcat(["--proxy", "socks5://\(user):e2e-s3cret@\(proxy)", "dual.test", Self.port])
            #expect(ours.status == 0 && ours.timing["proxy"] == proxy, "nwcat: \(ours.standardError)")
            #expect(!ours.standardError.contains("e2e-s3cret"), "the password is never printed")
            let wrong = try await lab.nwcat(["--proxy", "socks5://\(user):wrong@\(proxy)", "dual.test", Self.port])
            #expect(wrong.status == 1 && wrong.standardError.contains("rawValue: 13"), "EACCES: \(wrong.standardError)")
            let none = try await lab.nwcat(["--proxy", "socks5://\(proxy)", "dual.test", Self.port])
            #expect(none.status == 1 && none.standardError.contains("rawValue: 13"), "EACCES: \(none.standardError)")

            let anchor = try await lab.curl(["--proxy", "socks5h://\(user):e2e-s3cret@\(proxy)"], url: Self.http)
            #expect(anchor.status == 0 && anchor.httpCode == "200", "curl: \(anchor.standardError)")
            let anchorWrong = try await lab.curl(["--proxy", "socks5h://\(user):wrong@\(proxy)"], url: Self.http)
            #expect(anchorWrong.status == 97, "curl: the SOCKS5 server rejected the user (97): \(anchorWrong.standardError)")
        }
    }

    @Test("HTTP CONNECT through tinyproxy with Basic auth: the tunnel works with credentials, 407 is EACCES without; curl -p agrees")
    func httpConnectWithBasicAuthentication() async throws {
        guard let lab = try await EndToEndLab.make() else { return }
        defer { lab.tearDown() }
        try await lab.startTinyproxy(user: "proxyuser", password: "e2e-s3cret")
        let proxy = "\(EndToEndLab.serverIPv4):\(EndToEndLab.httpProxyPort)"

        let ours = try await lab.nwcat(["--proxy", "http://proxyuser:e2e-s3cret@\(proxy)", "dual.test", Self.port])
        #expect(ours.status == 0, "nwcat: \(ours.standardError)")
        #expect(ours.timing["proxy"] == proxy && ours.standardError.contains("proxy \(proxy)"), "\(ours.standardError)")
        #expect(!ours.standardError.contains("e2e-s3cret"), "the password is never printed")
        try await Self.waitForLine(in: lab.directory.appendingPathComponent("tinyproxy.log"),
                                   containing: "Established connection to host \"dual.test\"")
        let none = try await lab.nwcat(["--proxy", "http://\(proxy)", "dual.test", Self.port])
        #expect(none.status == 1 && none.standardError.contains("rawValue: 13"), "EACCES: \(none.standardError)")

        let anchor = try await lab.curl(["-p", "--proxy", "http://proxyuser:e2e-s3cret@\(proxy)"], url: Self.http)
        #expect(anchor.status == 0 && anchor.httpCode == "200", "curl: \(anchor.standardError)")
        let anchorNone = try await lab.curl(["-p", "--proxy", "http://\(proxy)"], url: Self.http)
        #expect(anchorNone.status != 0, "curl without credentials is refused too")
        if let duration = ours.duration {
            print("E2E HTTP CONNECT (tinyproxy, Basic): nwcat ready in \(Self.milliseconds(duration)); curl time_pretransfer \(Self.milliseconds(anchor.timePretransfer))")
        }
    }

    @Test("a PAC file sends dual.test through dante and direct.test DIRECT; pactester reads the file the same way")
    func pacChoosesPerHost() async throws {
        guard let lab = try await EndToEndLab.make() else { return }
        defer { lab.tearDown() }
        try await lab.startDante(usernameAuthentication: false)
        let proxy = "\(EndToEndLab.serverIPv4):\(EndToEndLab.socksPort)"
        let pac = lab.directory.appendingPathComponent("choose.pac")
        try """
            function FindProxyForURL(url, host) {
              if (dnsDomainIs(host, "dual.test")) return "SOCKS5 \(proxy)";
              return "DIRECT";
            }

            """.write(to: pac, atomically: true, encoding: .utf8)

        let proxied = try await lab.nwcat(["--pac", pac.path, "dual.test", Self.port])
        #expect(proxied.status == 0 && proxied.timing["proxy"] == proxy, "nwcat: \(proxied.standardError)")
        let direct = try await lab.nwcat(["--pac", pac.path, "direct.test", Self.port])
        #expect(direct.status == 0 && direct.timing["proxy"] == "none", "nwcat: \(direct.standardError)")
        #expect(direct.timing["resolution_source"] == "query", "DIRECT resolves here: \(direct.timing)")
        #expect(!lab.dnsLog.contains("dual.test from \(EndToEndLab.clientIPv4)"), "the proxied name was not resolved here")

        // The anchor: libpacparser's pactester on the same file.
        guard let pactester = PeerProcess.executable("pactester", package: "libpacparser1") else { return }
        let forDual = try await ToolProcess.run(pactester, ["-p", pac.path, "-u", Self.http, "-h", "dual.test"])
        let forDirect = try await ToolProcess.run(
            pactester, ["-p", pac.path, "-u", "http://direct.test:\(EndToEndLab.httpPort)/", "-h", "direct.test"])
        #expect(forDual.output.trimmingCharacters(in: .whitespacesAndNewlines) == "SOCKS5 \(proxy)")
        #expect(forDirect.output.trimmingCharacters(in: .whitespacesAndNewlines) == "DIRECT")
    }

    @Test("usage errors: --timeout must be a positive number of seconds and TCP only; a proxy port out of range is refused, not a crash")
    func usageErrors() async throws {
        guard let nwcat = builtNWCat() else { return }
        let zero = try await ToolProcess.run(nwcat, ["connect", "--timeout", "0", "127.0.0.1", "9"])
        #expect(zero.status == 64 && zero.error.contains("--timeout must be a positive"), "\(zero.error)")
        let udp = try await ToolProcess.run(nwcat, ["connect", "--udp", "--timeout", "2", "127.0.0.1", "9"])
        #expect(udp.status == 64 && udp.error.contains("--timeout applies to TCP only"), "\(udp.error)")
        let port = try await ToolProcess.run(nwcat, ["connect", "--proxy", "socks5://127.0.0.1:70000", "127.0.0.1", "9"])
        #expect(port.status == 64, "\(port.error)")
    }

    /// Waits until a peer's log file has a line containing `text` (peers write their logs
    /// asynchronously to the connection they report).
    static func waitForLine(in file: URL, containing text: String, timeout: Double = 5) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let log = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            if log.contains(text) { return }
            guard Date() < deadline else {
                throw LabError("no \(text.debugDescription) in \(file.lastPathComponent) after \(timeout) s (got \(log.debugDescription))")
            }
            await pause(milliseconds: 20)
        }
    }
}
