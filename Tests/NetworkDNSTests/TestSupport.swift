import NIOCore
import PeerSupport
import Synchronization
import Testing
@testable import NetworkDNS

/// A clock the test moves by hand.
final class FakeClock: Sendable {
    private let current = Mutex(NIODeadline.uptimeNanoseconds(1_000_000_000_000))

    var now: NIODeadline { current.withLock { $0 } }

    func advance(_ amount: TimeAmount) {
        current.withLock { $0 = $0 + amount }
    }

    var dnsClock: DNSClock { DNSClock { [self] in self.now } }
}

/// A port no UDP or TCP socket uses right now, below the ephemeral range (so the kernel will
/// not hand it to someone's outgoing connection between our check and the server's bind).
/// Random, so parallel tests rarely pick the same; `Dnsmasq.start` retries if one does.
func freeLoopbackPort() -> UInt16? {
    let ephemeral = ProcFS.ephemeralPortRange()
    let upper = max(20_001, min(ephemeral.lowerBound - 1, 32_000))
    for _ in 0..<50 {
        let port = UInt16(Int.random(in: 20_000...upper))
        let used = (ProcFS.sockets(udp: true) + ProcFS.sockets(udp: false)).contains { $0.localPort == port }
        if !used { return port }
    }
    return nil
}

/// A real dnsmasq on 127.0.0.1 answering for `*.test` from command-line records only.
final class Dnsmasq: Sendable {
    let process: PeerProcess
    let port: UInt16

    /// Nil (with a recorded failure under CI) when dnsmasq is not installed.
    static func start(
        records: [String], listenAddress: String = "127.0.0.1", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Dnsmasq? {
        guard let executable = PeerProcess.executable("dnsmasq", package: "dnsmasq-base", sourceLocation: sourceLocation)
        else { return nil }
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try #require(freeLoopbackPort())
            let process = try PeerProcess(
                executable,
                [
                    "-k", "--conf-file=/dev/null", "--no-resolv", "--no-hosts", "--user=root", "--pid-file=",
                    "--listen-address=\(listenAddress)", "--port=\(port)", "--bind-interfaces", "--local=/test/",
                    "--log-facility=/dev/null",
                ] + records)
            let server = Dnsmasq(process: process, port: port, host: listenAddress)
            do {
                // dnsmasq exits at once when the port was taken after all: try another.
                try await waitUntilBound(port: port, udp: true, timeout: 3)
                try await waitUntilBound(port: port, udp: false, timeout: 3)
                return server
            } catch {
                lastError = error
                await server.stop()
            }
        }
        throw lastError ?? CancellationError()
    }

    let host: String

    private init(process: PeerProcess, port: UInt16, host: String) {
        self.process = process
        self.port = port
        self.host = host
    }

    var address: SocketAddress {
        get throws { try SocketAddress(ipAddress: host, port: Int(port)) }
    }

    /// A resolver that asks only this server, with its own cache.
    func resolver(
        searchDomains: [String] = [], cache: DNSCache = DNSCache(), ednsPayloadSize: UInt16? = 1232,
        timeout: TimeAmount = .seconds(2), hosts: HostsFile = HostsFile(), clock: DNSClock = .system,
        nameserversBefore: [SocketAddress] = []
    ) throws -> DNSResolver {
        DNSResolver(
            configuration: DNSResolverConfiguration(
                nameservers: nameserversBefore + [try address], searchDomains: searchDomains, timeout: timeout, attempts: 2,
                ednsPayloadSize: ednsPayloadSize, hosts: hosts),
            cache: cache, clock: clock)
    }

    /// Stops dnsmasq off the cooperative pool: `PeerProcess.stop()` blocks in
    /// `waitUntilExit`, and Foundation's child reaper can sit in a blocking wait4 on another
    /// test's still-running peer; two tests blocked like that on a 2-core machine used up the
    /// whole pool and deadlocked the run.
    func stop() async {
        let process = self.process
        _ = try? await offload { process.stop() }
    }
}

/// Runs `body` with a dnsmasq serving `records`, and always stops it afterwards. Does nothing
/// (after recording a failure under CI) when dnsmasq is not installed.
func withDnsmasq(
    records: [String] = standardRecords, listenAddress: String = "127.0.0.1",
    sourceLocation: SourceLocation = #_sourceLocation, _ body: (Dnsmasq) async throws -> Void
) async throws {
    guard let dnsmasq = try await Dnsmasq.start(records: records, listenAddress: listenAddress, sourceLocation: sourceLocation)
    else { return }
    do {
        try await body(dnsmasq)
    } catch {
        await dnsmasq.stop()
        throw error
    }
    await dnsmasq.stop()
}

/// The standard zone the resolver tests use.
let standardRecords: [String] = [
    "--host-record=dual.test,10.77.0.2,fd77::2,30",
    "--host-record=v4only.test,10.77.0.4,60",
    "--cname=alias.test,dual.test",
    "--srv-host=_x._tcp.test,dual.test,443,0,5",
    "--txt-record=t.test,a=1,second",
] + (1...100).map { "--host-record=many.test,10.1.\($0 / 256).\($0 % 256)" }

/// Hex text to bytes (for vectors written out in tests).
func bytes(hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var high: UInt8?
    for character in hex.unicodeScalars {
        guard let digit = UInt8(String(character), radix: 16) else { continue }
        if let first = high {
            result.append(first << 4 | digit)
            high = nil
        } else {
            high = digit
        }
    }
    return result
}
