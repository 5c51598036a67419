import NIOCore
import PeerSupport
import NetworkSync
import Testing
@testable import NetworkDNS

/// A clock the test moves by hand.
final class FakeClock: Sendable {
    private let current = Lock(NIODeadline.uptimeNanoseconds(1_000_000_000_000))

    var now: NIODeadline { current.withLock { $0 } }

    func advance(_ amount: TimeAmount) {
        current.withLock { $0 = $0 + amount }
    }

    var dnsClock: DNSClock { DNSClock { [self] in self.now } }
}

extension Dnsmasq {
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
