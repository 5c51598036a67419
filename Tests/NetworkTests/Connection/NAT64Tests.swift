#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PeerSupport
import Testing

/// NAT64 (RFC 7050 / RFC 6052) end to end: in a network namespace with no IPv4 route, a DNS64
/// (dnsmasq answering `ipv4only.arpa` with addresses in 64:ff9b::/96) and a server on the
/// synthesised address, `nwcat connect 192.0.2.33` reaches the server at 64:ff9b::c000:221.
/// nwcat runs in the namespace, so its resolver reads the namespace's resolv.conf.
@Suite("Connection.NAT64", .serialized)
struct NAT64Tests {
    @Test("an IPv4 literal on an IPv6-only network is reached through the DNS64's NAT64 prefix")
    func ipv4LiteralThroughNAT64() async throws {
        guard let ip = PeerProcess.executable("ip", package: "iproute2"),
            let dnsmasq = PeerProcess.executable("dnsmasq", package: "dnsmasq-base"),
            let socat = PeerProcess.executable(), let nwcat = builtNWCat()
        else { return }
        guard getuid() == 0 else {
            PeerProcess.missingPeer("network namespaces need root")
            return
        }
        let name = "n64t\(getpid() % 100_000)"
        let etc = "/etc/netns/\(name)"
        func run(_ arguments: [String]) async throws -> (status: Int32?, output: String, error: String) {
            try await ToolProcess.run(ip, arguments, timeout: 10)
        }
        _ = try await run(["netns", "add", name])
        defer {
            _ = try? FileManager.default.removeItem(atPath: etc)
            _ = try? ShortTool.run(ip, ["netns", "del", name])
        }
        for command in [
            ["netns", "exec", name, ip, "link", "set", "lo", "up"],
            // The server's address is the synthesised one; IPv4 has nothing but loopback.
            ["netns", "exec", name, ip, "-6", "addr", "add", "64:ff9b::c000:221/128", "dev", "lo"],
        ] {
            let result = try await run(command)
            try #require(result.status == 0, "ip \(command.joined(separator: " ")): \(result.error)")
        }
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        try Data("nameserver ::1\n".utf8).write(to: URL(fileURLWithPath: "\(etc)/resolv.conf"))
        try Data("127.0.0.1 localhost\n".utf8).write(to: URL(fileURLWithPath: "\(etc)/hosts"))

        let dns = try PeerProcess(ip, [
            "netns", "exec", name, dnsmasq, "-k", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--user=root",
            "--pid-file=", "--listen-address=::1", "--bind-interfaces", "--log-facility=/dev/null",
            "--host-record=ipv4only.arpa,64:ff9b::c000:aa,64:ff9b::c000:ab",
        ])
        defer { dns.stop() }
        let server = try PeerProcess(ip, ["netns", "exec", name, socat, "TCP6-LISTEN:7777,bind=[64:ff9b::c000:221],fork,reuseaddr", "EXEC:cat"])
        defer { server.stop() }
        // Both listen inside the namespace: wait until nwcat there gets an answer.
        var result: (status: Int32?, output: String, error: String) = (nil, "", "")
        let deadline = Date().addingTimeInterval(10)
        repeat {
            result = try await ToolProcess.run(
                ip, ["netns", "exec", name, nwcat, "connect", "-v", "192.0.2.33", "7777"], input: Data("via nat64\n".utf8),
                timeout: 10)
            if result.status == 0 { break }
            await pause(milliseconds: 200)
        } while Date() < deadline
        #expect(result.status == 0, "nwcat: \(result.error)")
        #expect(result.output == "via nat64\n")
    }
}
