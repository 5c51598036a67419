#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import PeerSupport
import Testing

/// A network namespace joined to ours by a veth pair, with a socat echo server inside listening
/// on both families, and an nftables rule in the namespace that drops every IPv6 TCP packet to
/// the server's port. IPv6 SYNs vanish without an answer (no RST, no ICMP): a real blackhole, the
/// case Happy Eyeballs exists for. Subnets are chosen among those our namespace does not use, so
/// parallel runs do not collide; `tearDown` (also run on deinit) removes everything.
final class BlackholeNamespace: Sendable {
    let namespace: TestNamespace
    let port = 7777
    let ipv4: SocketAddress
    let ipv6: SocketAddress

    /// Builds the namespace, or returns nil (after saying why, and failing under CI) when this
    /// machine lacks the privileges or tools.
    static func make(sourceLocation: SourceLocation = #_sourceLocation) async throws -> BlackholeNamespace? {
        guard let socat = PeerProcess.executable("socat", sourceLocation: sourceLocation),
            PeerProcess.executable("nft", package: "nftables", sourceLocation: sourceLocation) != nil,
            let namespace = TestNamespace.make(sourceLocation: sourceLocation)
        else { return nil }
        do {
            // Off the cooperative pool: many short tools, each waited for.
            let blackhole = try await offload { try configure(namespace, socat: socat) }
            try await namespace.waitUntilBound(port: UInt16(blackhole.port))
            return blackhole
        } catch {
            namespace.tearDown()
            throw error
        }
    }

    /// The link, the addresses, the rule and the server.
    private static func configure(_ namespace: TestNamespace, socat: String) throws -> BlackholeNamespace {
        // Our side of the link lives in the test's own namespace: pick a subnet it does not use.
        let taken = try ShortTool.check(namespace.ip, ["-o", "addr", "show"])
        let subnet = (1...250).shuffled().first { !taken.contains("10.77.\($0).") && !taken.contains("fd77:\($0)::") } ?? 1
        let blackhole = try BlackholeNamespace(namespace: namespace, subnet: subnet)
        try namespace.link(
            addresses: ["10.77.\(subnet).2/24", "fd77:\(subnet)::2/64"], to: nil,
            otherAddresses: ["10.77.\(subnet).1/24", "fd77:\(subnet)::1/64"])
        try namespace.applyRuleset("""
            table inet he {
              chain input {
                type filter hook input priority 0; policy accept;
                meta nfproto ipv6 tcp dport \(blackhole.port) drop
              }
            }
            """)
        _ = try namespace.start(socat, ["TCP6-LISTEN:\(blackhole.port),ipv6only=0,fork,reuseaddr", "EXEC:cat"])
        return blackhole
    }

    private init(namespace: TestNamespace, subnet: Int) throws {
        self.namespace = namespace
        ipv4 = try SocketAddress(ipAddress: "10.77.\(subnet).2", port: port)
        ipv6 = try SocketAddress(ipAddress: "fd77:\(subnet)::2", port: port)
    }

    /// Removes the server, the veth pair and the namespace (idempotent).
    func tearDown() {
        namespace.tearDown()
    }

    /// Runs a command to completion; its standard output, or `TestNamespace.CommandFailed`.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        try ShortTool.check(executable, arguments)
    }
}
