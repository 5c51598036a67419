#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NetworkSync
import Testing

/// A network namespace a test makes for itself: its own interfaces, addresses, routes,
/// nftables rules and `/etc/netns/NAME/` files (which `ip netns exec` mounts over `/etc`, so
/// programs run inside read that namespace's resolv.conf, hosts and nsswitch.conf). Peers
/// started inside are stopped, and the namespace and its files removed, by `tearDown` (also
/// run on deinit), whatever the test did.
///
/// Names carry the creating process's pid (`nw<pid>x<n>`), so parallel test processes never
/// collide and a later run can remove what a crashed one left behind.
public final class TestNamespace: @unchecked Sendable {
    /// The namespace's name, as `ip netns` knows it.
    public let name: String
    /// Path of `ip`.
    public let ip: String

    private let state = Lock(State())
    private struct State {
        var peers: [PeerProcess] = []
        var undo: [[String]] = []
        var torn = false
    }

    private static let counter = Lock(0)
    private static let swept = Lock(false)

    /// A setup command that failed.
    public struct CommandFailed: Error, CustomStringConvertible {
        public let command: [String]
        public let status: Int32
        public let output: String
        public var description: String { "\(command.joined(separator: " ")) exited \(status): \(output)" }
    }

    /// Two new namespaces (not linked yet; the caller tears them down), or nil as `make` says.
    public static func makePair(sourceLocation: SourceLocation = #_sourceLocation) -> (TestNamespace, TestNamespace)? {
        guard let a = make(sourceLocation: sourceLocation) else { return nil }
        guard let b = make(sourceLocation: sourceLocation) else {
            a.tearDown()
            return nil
        }
        return (a, b)
    }

    /// Creates an empty namespace with loopback up, or returns nil (after saying why, and
    /// failing under CI) when this machine lacks `ip`, root or namespace support.
    public static func make(sourceLocation: SourceLocation = #_sourceLocation) -> TestNamespace? {
        guard let ip = PeerProcess.executable("ip", package: "iproute2", sourceLocation: sourceLocation) else { return nil }
        guard getuid() == 0 else {
            PeerProcess.missingPeer("network namespaces need root (CAP_NET_ADMIN)", sourceLocation: sourceLocation)
            return nil
        }
        removeLeftovers(ip: ip)
        let index = counter.withLock { value -> Int in
            value = (value + 1) % 1000
            return value
        }
        // At most 13 characters: interface names built from it (15 at most) get a suffix.
        let namespace = TestNamespace(name: "nw\(getpid())x\(index)", ip: ip)
        do {
            try ShortTool.check(ip, ["netns", "add", namespace.name])
        } catch {
            PeerProcess.missingPeer("cannot create a network namespace: \(error)", sourceLocation: sourceLocation)
            return nil
        }
        namespace.state.withLock { $0.undo.append(["netns", "del", namespace.name]) }
        do {
            try namespace.run(ip, ["link", "set", "lo", "up"])
            // No duplicate address detection on interfaces made later: while a new link's
            // link-local address is tentative, the first IPv6 SYN over it is lost (a one-second
            // retransmission that would pass for a blackhole).
            if let sysctl = PeerProcess.executable("sysctl", package: "procps", sourceLocation: sourceLocation) {
                try namespace.run(sysctl, ["-qw", "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"])
            }
        } catch {
            namespace.tearDown()
            Issue.record(error, sourceLocation: sourceLocation)
            return nil
        }
        return namespace
    }

    private init(name: String, ip: String) {
        self.name = name
        self.ip = ip
    }

    /// Removes, once per process, namespaces this helper made in processes that no longer run
    /// (a crashed or killed test run cannot tear down).
    private static func removeLeftovers(ip: String) {
        guard swept.withLock({ done in
            defer { done = true }
            return !done
        }) else { return }
        let listing = (try? ShortTool.check(ip, ["netns", "list"])) ?? ""
        for line in listing.split(separator: "\n") {
            guard let name = line.split(separator: " ").first, name.hasPrefix("nw"),
                let x = name.firstIndex(of: "x"),
                let pid = Int32(name[name.index(name.startIndex, offsetBy: 2)..<x]),
                Int(name[name.index(after: x)...]) != nil,
                pid != getpid(), kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            _ = try? ShortTool.check(ip, ["netns", "del", String(name)])
            try? FileManager.default.removeItem(atPath: "/etc/netns/\(name)")
        }
    }

    /// Joins two namespaces (or this one and the test's own, when `other` is nil) with a veth
    /// pair, gives each end its addresses (`10.1.2.3/24`, `2001:db8::1/64`; IPv6 without
    /// duplicate address detection, so they are usable at once) and brings both up. Returns
    /// the interface names (this side, other side). `second` makes a second pair between the
    /// same two (other interface names).
    @discardableResult
    public func link(
        addresses: [String], to other: TestNamespace?, otherAddresses: [String], second: Bool = false
    ) throws -> (String, String) {
        let mine = "\(name)\(second ? "c" : "a")"
        let theirs = other.map { "\($0.name)\(second ? "d" : "b")" } ?? "\(name)\(second ? "p" : "o")"
        if let other {
            try ShortTool.check(ip, ["link", "add", mine, "netns", name, "type", "veth", "peer", "name", theirs, "netns", other.name])
        } else {
            try ShortTool.check(ip, ["link", "add", mine, "netns", name, "type", "veth", "peer", "name", theirs])
            // Deleting the namespace destroys the pair too; this covers a namespace that
            // could not be deleted.
            state.withLock { $0.undo.append(["link", "del", theirs]) }
        }
        func configure(_ namespace: TestNamespace?, _ interface: String, _ addresses: [String]) throws {
            let prefix = namespace.map { ["-n", $0.name] } ?? []
            for address in addresses {
                let family = address.contains(":") ? ["-6"] : []
                let nodad = address.contains(":") ? ["nodad"] : []
                try ShortTool.check(ip, prefix + family + ["addr", "add", address, "dev", interface] + nodad)
            }
            try ShortTool.check(ip, prefix + ["link", "set", interface, "up"])
        }
        try configure(self, mine, addresses)
        try configure(other, theirs, otherAddresses)
        // Permanent neighbour entries both ways: on a link that just came up, the first IPv6
        // neighbour solicitation goes unanswered here, so the first SYN to a new neighbour
        // waits a second for its retransmission (a delay that would pass for a blackhole).
        let myMAC = try macAddress(of: mine, in: self)
        let theirMAC = try macAddress(of: theirs, in: other)
        func pin(_ namespace: TestNamespace?, _ interface: String, _ addresses: [String], _ mac: String) throws {
            let prefix = namespace.map { ["-n", $0.name] } ?? []
            for address in addresses {
                let plain = String(address.split(separator: "/").first ?? Substring(address))
                try ShortTool.check(ip, prefix + ["neigh", "replace", plain, "lladdr", mac, "dev", interface, "nud", "permanent"])
            }
        }
        try pin(self, mine, otherAddresses, theirMAC)
        try pin(other, theirs, addresses, myMAC)
        return (mine, theirs)
    }

    /// The Ethernet address of `interface` in `namespace` (nil: the test's own namespace).
    private func macAddress(of interface: String, in namespace: TestNamespace?) throws -> String {
        let prefix = namespace.map { ["-n", $0.name] } ?? []
        let text = try ShortTool.check(ip, prefix + ["-o", "link", "show", "dev", interface])
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\\" || $0 == "\n" })
        guard let index = words.firstIndex(of: "link/ether"), words.index(after: index) < words.endIndex else {
            throw CommandFailed(command: ["ip", "link", "show", interface], status: 0, output: "no link/ether in: \(text)")
        }
        return String(words[words.index(after: index)])
    }

    /// Writes `/etc/netns/NAME/<file>`: programs run in this namespace see it as `/etc/<file>`.
    public func writeEtc(_ file: String, _ contents: String) throws {
        let directory = "/etc/netns/\(name)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try contents.write(toFile: "\(directory)/\(file)", atomically: true, encoding: .utf8)
    }

    /// Runs a short program inside the namespace to its end; its output, or `CommandFailed`.
    @discardableResult
    public func run(_ executable: String, _ arguments: [String]) throws -> String {
        try ShortTool.check(ip, ["netns", "exec", name, executable] + arguments)
    }

    /// Loads an nftables ruleset (`nft -f` syntax) into the namespace.
    public func applyRuleset(_ ruleset: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard let nft = PeerProcess.executable("nft", package: "nftables", sourceLocation: sourceLocation) else {
            throw CommandFailed(command: ["nft"], status: -1, output: "nft is not installed")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).nft")
        try ruleset.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try run(nft, ["-f", file.path])
    }

    /// Starts a long-running peer inside the namespace, its standard input and output on
    /// /dev/null (peers here log to files); `tearDown` stops it.
    public func start(_ executable: String, _ arguments: [String]) throws -> PeerProcess {
        let peer = try PeerProcess(ip, ["netns", "exec", name, executable] + arguments, captureOutput: false)
        state.withLock { $0.peers.append(peer) }
        return peer
    }

    /// Waits until a socket in the namespace listens on TCP `port` (or has UDP `port` bound).
    /// The namespace has its own /proc/net, so the tables are read from inside.
    public func waitUntilBound(port: UInt16, udp: Bool = false, timeout: Double = 10) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        let tables = udp ? ["/proc/net/udp", "/proc/net/udp6"] : ["/proc/net/tcp", "/proc/net/tcp6"]
        while true {
            // Off the cooperative pool: a blocking wait for a child there starves other tests.
            let text = try await offload { [self] in try run("/bin/cat", tables) }
            let rows = ProcFS.socketRows(text)
            if rows.contains(where: { $0.localPort == port && (udp || $0.state == ProcFS.tcpListenState) }) { return }
            guard Date() < deadline else {
                throw BehaviourTimeout(what: "a socket bound to port \(port) in namespace \(name)", seconds: timeout)
            }
            await pause(milliseconds: 20)
        }
    }

    /// Stops the peers, deletes the namespace (which destroys its interfaces and rules) and
    /// its /etc/netns files. Idempotent.
    public func tearDown() {
        let (peers, undo) = state.withLock { state -> ([PeerProcess], [[String]]) in
            guard !state.torn else { return ([], []) }
            state.torn = true
            return (state.peers, state.undo)
        }
        for peer in peers { peer.stop() }
        for command in undo.reversed() { _ = try? ShortTool.check(ip, command) }
        try? FileManager.default.removeItem(atPath: "/etc/netns/\(name)")
    }

    deinit { tearDown() }
}


/// A throwaway system account for peers that check passwords against the system's database
/// (dante's `socksmethod: username`), deleted afterwards whatever happens. Needs root; does
/// nothing (after saying why, failing under CI) without it or without the tools.
public func withSystemAccount(
    password: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: (String) async throws -> Void
) async throws {
    guard getuid() == 0 else {
        PeerProcess.missingPeer("creating a system account needs root", sourceLocation: sourceLocation)
        return
    }
    guard let useradd = PeerProcess.executable("useradd", package: "passwd", sourceLocation: sourceLocation),
        let chpasswd = PeerProcess.executable("chpasswd", package: "passwd", sourceLocation: sourceLocation),
        let userdel = PeerProcess.executable("userdel", package: "passwd", sourceLocation: sourceLocation)
    else { return }
    let name = "nwpx" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
    try ShortTool.check(useradd, ["-M", "-N", "-s", "/usr/sbin/nologin", name])
    defer { _ = try? ShortTool.run(userdel, [name]) }
    try ShortTool.check(chpasswd, [], input: "\(name):\(password)\n")
    try await body(name)
}
