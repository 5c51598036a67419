import Foundation
import PeerSupport
import Testing
@testable import NetworkPAC

/// The independent anchor: the same PAC files, evaluated by `pactester` (libpacparser, which
/// nobody here wrote, on its own JavaScript engine and helper library) and by `PACEvaluator`,
/// must answer the same for every URL in the table.
///
/// Only literal addresses and `localhost` (from /etc/hosts) reach the name helpers, so both
/// sides see the same answers without DNS traffic. `myIpAddress()` is pinned on both sides
/// (`pactester -c`, and the evaluator's local addresses).
@Suite struct PACPactesterAnchorTests {
    static let clientAddress = "10.20.30.40"

    /// The script from the peers smoke test (PEERS.md, section 5).
    static let smokeScript = """
        function FindProxyForURL(url, host) {
          if (isPlainHostName(host) || dnsDomainIs(host, ".internal.test")) return "DIRECT";
          if (shExpMatch(url, "https://secure.*")) return "HTTPS 127.0.0.1:8443";
          if (isInNet(host, "127.0.0.0", "255.0.0.0")) return "SOCKS5 127.0.0.1:1080";
          return "PROXY 127.0.0.1:3128; DIRECT";
        }
        """

    /// Exercises most helpers; names reach the DNS helpers only when they are literals or localhost.
    static let helperScript = """
        function literal(host) { return /^\\d+\\.\\d+\\.\\d+\\.\\d+$/.test(host) || host === "localhost"; }
        function FindProxyForURL(url, host) {
          if (host === "localhost") return isResolvable(host) ? "PROXY " + dnsResolve(host) + ":8" : "DIRECT";
          if (isPlainHostName(host)) return "DIRECT";
          if (localHostOrDomainIs(host, "www.corp.test")) return "PROXY 10.0.0.2:8080; DIRECT";
          if (dnsDomainIs(host, ".corp.test")) return "PROXY 10.0.0.1:8080";
          if (shExpMatch(url, "*://*.media.test/*.mp4")) return "SOCKS 10.0.0.3:1080";
          if (shExpMatch(url, "http://?.short.test/*")) return "SOCKS4 10.0.0.4:1080";
          if (literal(host) && isInNet(host, "192.168.0.0", "255.255.0.0")) return "DIRECT";
          if (literal(host) && isInNet(host, "172.16.0.0", "255.240.0.0")) return "HTTPS 10.0.0.5:443";
          if (dnsDomainLevels(host) > 3) return "PROXY deep.test:3128";
          if (isInNet(myIpAddress(), "10.20.0.0", "255.255.0.0")) return "PROXY office.test:3128; PROXY backup.test:3128; DIRECT";
          return "DIRECT";
        }
        """

    /// Microsoft's IPv6-aware helpers, on literals only.
    static let extensionScript = """
        function FindProxyForURL(url, host) {
          if (!isResolvableEx(host)) return "PROXY unresolvable.test:1";
          if (isInNetEx(host, "2001:db8::/32")) return "PROXY [2001:db8::ff]:3128";
          if (isInNetEx(host, "10.0.0.0/8")) return "PROXY [2001:db8::a]:8080; SOCKS5 10.0.0.1:1080";
          if (isInNetEx(myIpAddressEx(), "10.20.30.0/24")) return "PROXY " + dnsResolveEx(host) + ":2";
          return "DIRECT";
        }
        """

    /// The date and time helpers, with ranges that hold (or fail) whatever the clock says, since
    /// pactester reads the real clock. Wrapping ranges are left out: libpacparser 1.3.6 does not
    /// wrap them, this evaluator does (docs/pac.md).
    static let timeScript = """
        function FindProxyForURL(url, host) {
          var all = [weekdayRange("SUN", "SAT"), weekdayRange("SUN", "SAT", "GMT"), timeRange(0, 23),
                     timeRange(0, 0, 23, 59, "GMT"), timeRange(0, 0, 0, 23, 59, 59), dateRange(1, 31),
                     dateRange("JAN", "DEC", "GMT"), dateRange(2000, 2999), dateRange(1990, 1995),
                     dateRange(1, "JAN", 1990, 31, "DEC", 1999, "GMT")];
          return "PROXY " + all.join("-") + ".test:1";
        }
        """

    /// (script, url, host) rows.
    static let table: [(String, String, String)] = [
        ("smoke", "http://127.0.0.1:8080/", "127.0.0.1"),
        ("smoke", "https://secure.example.test/", "secure.example.test"),
        ("smoke", "http://intranet/", "intranet"),
        ("smoke", "http://a.internal.test/x", "a.internal.test"),
        ("smoke", "http://127.1.2.3/", "127.1.2.3"),
        ("smoke", "http://192.0.2.1/", "192.0.2.1"),
        ("helpers", "http://localhost/", "localhost"),
        ("helpers", "http://printer/", "printer"),
        ("helpers", "http://www.corp.test/", "www.corp.test"),
        ("helpers", "http://mail.corp.test/", "mail.corp.test"),
        ("helpers", "http://cdn.media.test/clip.mp4", "cdn.media.test"),
        ("helpers", "http://cdn.media.test/clip.mkv", "cdn.media.test"),
        ("helpers", "http://a.short.test/", "a.short.test"),
        ("helpers", "http://ab.short.test/", "ab.short.test"),
        ("helpers", "http://192.168.7.7/", "192.168.7.7"),
        ("helpers", "http://172.20.1.1/", "172.20.1.1"),
        ("helpers", "http://172.32.1.1/", "172.32.1.1"),
        ("helpers", "http://a.b.c.d.test/", "a.b.c.d.test"),
        ("helpers", "http://www.example.test/", "www.example.test"),
        ("extensions", "http://[2001:db8::1]/", "2001:db8::1"),
        ("extensions", "http://10.1.1.1/", "10.1.1.1"),
        ("extensions", "http://192.0.2.7/", "192.0.2.7"),
        ("time", "http://a.test/", "a.test"),
    ]

    @Test func pactesterAndThisEvaluatorAgree() async throws {
        guard let pactester = PeerProcess.executable("pactester", package: "libpacparser1") else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pac-anchor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        var configuration = PACConfiguration()
        let client = Self.clientAddress
        // The real resolver (localhost comes from /etc/hosts, as for pactester); the local
        // address pinned as pactester's -c pins it.
        // (20 s for each lookup: a run with every suite in parallel beside a fuzzer saw the 2 s
        // default give up on localhost.)
        configuration.environment = PACHostEnvironment(
            resolve: { PACSystemResolver.resolve($0, waitingAtMost: 20) }, localAddresses: { [client] })
        var evaluators: [String: PACEvaluator] = [:]
        for (name, script) in [("smoke", Self.smokeScript), ("helpers", Self.helperScript), ("extensions", Self.extensionScript),
                               ("time", Self.timeScript)] {
            let path = folder.appendingPathComponent("\(name).pac").path
            try script.write(toFile: path, atomically: true, encoding: .utf8)
            evaluators[name] = try await PACEvaluator.load(from: .file(path: path), configuration: configuration)
        }

        for (name, url, host) in Self.table {
            let path = folder.appendingPathComponent("\(name).pac").path
            let peer = try PeerProcess(pactester, ["-p", path, "-u", url, "-h", host, "-c", client])
            let status = await peer.waitForExit(timeout: 10)
            #expect(status == 0, "pactester failed for \(name) \(url)")
            let expected = String(decoding: peer.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let evaluator = try #require(evaluators[name])
            let answer = try await evaluator.findProxy(url: url, host: host)
            #expect(answer == expected, "\(name) \(url)")
            #expect(PACProxyChoice.parse(answer) == PACProxyChoice.parse(expected))
        }
    }
}
