#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import PeerSupport
import Synchronization
import Testing

/// A network namespace joined to ours by a veth pair, with a socat echo server inside listening
/// on both families, and an nftables rule in the namespace that drops every IPv6 TCP packet to
/// the server's port. IPv6 SYNs vanish without an answer (no RST, no ICMP): a real blackhole, the
/// case Happy Eyeballs exists for. Names and subnets are unique per instance, so parallel runs
/// do not collide; `tearDown` (also run on deinit) removes everything.
final class BlackholeNamespace: @unchecked Sendable {
    let name: String
    let port = 7777
    let ipv4: SocketAddress
    let ipv6: SocketAddress
    private let ip: String
    private var server: PeerProcess?
    private var created: [[String]] = []
    private let torn = Mutex(false)

    private static let counter = Mutex(0)

    /// A failed setup command.
    struct CommandFailed: Error, CustomStringConvertible {
        let command: [String]
        let status: Int32
        let output: String
        var description: String { "\(command.joined(separator: " ")) exited \(status): \(output)" }
    }

    /// Builds the namespace, or returns nil (after saying why, and failing under CI) when this
    /// machine lacks the privileges or tools.
    static func make(sourceLocation: SourceLocation = #_sourceLocation) async throws -> BlackholeNamespace? {
        guard let ip = PeerProcess.executable("ip", package: "iproute2", sourceLocation: sourceLocation),
            let nft = PeerProcess.executable("nft", package: "nftables", sourceLocation: sourceLocation),
            let socat = PeerProcess.executable("socat", sourceLocation: sourceLocation)
        else { return nil }
        guard getuid() == 0 else {
            PeerProcess.missingPeer("network namespaces need root (CAP_NET_ADMIN)", sourceLocation: sourceLocation)
            return nil
        }
        let index = counter.withLock { value -> Int in
            value += 1
            return value
        }
        let name = "hb\(getpid() % 100_000)n\(index)"
        let taken = (try? run(ip, ["-o", "addr", "show"])) ?? ""
        let subnet = (1...250).shuffled().first { !taken.contains("10.77.\($0).") && !taken.contains("fd77:\($0)::") } ?? 1
        let namespace = try BlackholeNamespace(name: name, subnet: subnet, ip: ip)
        do {
            try namespace.create(["netns", "add", name], undo: ["netns", "del", name])
        } catch let failure as CommandFailed {
            PeerProcess.missingPeer("cannot create a network namespace: \(failure)", sourceLocation: sourceLocation)
            return nil
        }
        do {
            try await namespace.build(subnet: subnet, nft: nft, socat: socat)
        } catch {
            namespace.tearDown()
            throw error
        }
        return namespace
    }

    private init(name: String, subnet: Int, ip: String) throws {
        self.name = name
        self.ip = ip
        ipv4 = try SocketAddress(ipAddress: "10.77.\(subnet).2", port: port)
        ipv6 = try SocketAddress(ipAddress: "fd77:\(subnet)::2", port: port)
    }

    private func build(subnet: Int, nft: String, socat: String) async throws {
        let outside = "\(name)a"
        let inside = "\(name)b"
        try create(["link", "add", outside, "type", "veth", "peer", "name", inside], undo: ["link", "del", outside])
        try command(["link", "set", inside, "netns", name])
        try command(["addr", "add", "10.77.\(subnet).1/24", "dev", outside])
        try command(["-6", "addr", "add", "fd77:\(subnet)::1/64", "dev", outside, "nodad"])
        try command(["link", "set", outside, "up"])
        try inNamespace([ip, "addr", "add", "10.77.\(subnet).2/24", "dev", inside])
        try inNamespace([ip, "-6", "addr", "add", "fd77:\(subnet)::2/64", "dev", inside, "nodad"])
        try inNamespace([ip, "link", "set", inside, "up"])
        try inNamespace([ip, "link", "set", "lo", "up"])
        try inNamespace([nft, "add", "table", "inet", "he"])
        try inNamespace([nft, "add", "chain", "inet", "he", "input", "{ type filter hook input priority 0 ; }"])
        try inNamespace([nft, "add", "rule", "inet", "he", "input", "meta", "nfproto", "ipv6", "tcp", "dport", "\(port)", "drop"])
        server = try PeerProcess(ip, ["netns", "exec", name, socat, "TCP6-LISTEN:\(port),ipv6only=0,fork,reuseaddr", "EXEC:cat"])
        // The namespace has its own /proc/net: ask from inside whether the server listens.
        let listening = String(format: ":%04X", port)
        let deadline = Date().addingTimeInterval(10)
        while true {
            let table = try Self.run(ip, ["netns", "exec", name, "cat", "/proc/net/tcp6"])
            let bound = table.split(separator: "\n").contains { line in
                let fields = line.split(separator: " ")
                return fields.count > 3 && fields[1].hasSuffix(listening) && fields[3] == "0A"
            }
            if bound { return }
            guard Date() < deadline else {
                throw CommandFailed(command: [socat], status: -1, output: "not listening in \(name) after 10 s")
            }
            await pause(milliseconds: 20)
        }
    }

    /// Removes the server, the veth pair and the namespace (idempotent).
    func tearDown() {
        guard torn.withLock({ done in
            defer { done = true }
            return !done
        }) else { return }
        server?.stop()
        for undo in created.reversed() { _ = try? Self.run(ip, undo) }
    }

    deinit { tearDown() }

    private func create(_ arguments: [String], undo: [String]) throws {
        try command(arguments)
        created.append(undo)
    }

    private func command(_ arguments: [String]) throws {
        _ = try Self.run(ip, arguments)
    }

    private func inNamespace(_ arguments: [String]) throws {
        _ = try Self.run(ip, ["netns", "exec", name] + arguments)
    }

    /// Runs a command to completion; its standard output, or `CommandFailed`.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw CommandFailed(command: [executable] + arguments, status: process.terminationStatus, output: text)
        }
        return text
    }
}
