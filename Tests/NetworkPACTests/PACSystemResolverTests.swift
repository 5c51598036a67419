import Foundation
import NIOCore
import NetworkDNS
import PeerSupport
import Testing
@testable import NetworkPAC

/// The default name lookups of PAC scripts, through a NetworkDNS resolver built for the test
/// (its own hosts file and cache; no traffic leaves the machine).
@Suite struct PACSystemResolverTests {
    /// A resolver that knows `hosts` and asks only `nameserver` (nothing listens there unless a
    /// test binds it).
    private static func resolver(hosts: String = "", nameserver port: Int = 9) throws -> DNSResolver {
        DNSResolver(
            configuration: DNSResolverConfiguration(
                nameservers: [try SocketAddress(ipAddress: "127.0.0.1", port: port)], timeout: .seconds(10), attempts: 1,
                hosts: HostsFile(parsing: hosts)),
            cache: DNSCache())
    }

    /// `PACSystemResolver.resolve` on a thread of its own, as the evaluator calls it: it blocks,
    /// and blocking a cooperative-pool thread (where tests run) can starve the resolver's tasks.
    /// Answers that must arrive get 30 s (the whole suite keeps the pool busy); the silent
    /// server's test keeps the real 2 s bound.
    private static func resolve(
        _ host: String, using resolver: DNSResolver, waitingAtMost limit: Double = 30
    ) async -> [String] {
        await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: PACSystemResolver.resolve(host, using: resolver, waitingAtMost: limit))
            }.start()
        }
    }

    @Test("names come from the resolver, IPv6 and IPv4 interleaved, each once; literals answer for themselves")
    func answersThroughTheResolver() async throws {
        let resolver = try Self.resolver(hosts: """
            192.0.2.9 dual.test
            198.51.100.9 dual.test
            2001:db8::9 dual.test
            """)
        #expect(await Self.resolve("dual.test", using: resolver) == ["2001:db8::9", "192.0.2.9", "198.51.100.9"])
        #expect(await Self.resolve("192.0.2.1", using: resolver) == ["192.0.2.1"])
        #expect(await Self.resolve("2001:db8::1", using: resolver) == ["2001:db8::1"])
    }

    /// A nameserver that never answers (a UDP socket nobody reads): the script gets nothing
    /// after `PACSystemResolver.timeout`, not after the resolver's own 10 s.
    @Test func aSilentServerCostsTheScriptAtMostTheTimeout() async throws {
        let silent = try SilentLoopbackSocket(udp: true)
        defer { silent.close() }
        let resolver = try Self.resolver(nameserver: silent.port)
        // (Timed on the blocked thread itself, as the script is blocked: under a parallel run the
        // test's own task may wait long for a pool thread afterwards, once 8 s.)
        let (answers, elapsed) = await withCheckedContinuation { (continuation: CheckedContinuation<([String], Double), Never>) in
            Thread {
                let started = Date()
                let answers = PACSystemResolver.resolve("silent.test", using: resolver, waitingAtMost: PACSystemResolver.timeout)
                continuation.resume(returning: (answers, Date().timeIntervalSince(started)))
            }.start()
        }
        #expect(answers == [])
        #expect(elapsed >= PACSystemResolver.timeout - 0.1 && elapsed < SanitizerSlowdown.seconds(8), "\(elapsed)")
    }
}
