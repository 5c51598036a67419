#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import PeerSupport
import Synchronization
import Testing
@testable import NetworkDNS

/// The resolver against a real dnsmasq on loopback (PEERS.md 9a).
@Suite("Resolver against dnsmasq", .serialized)
struct ResolverTests {
    @Test func resolvesBothFamiliesAsTwoEvents() async throws {
        try await withDnsmasq { dnsmasq in
            let resolver = try dnsmasq.resolver()
            let events = Recorder<DNSAddressLookupEvent>()
            resolver.lookUpAddresses("dual.test") { events.append($0) }
            let received = try await events.wait(count: 2, "AAAA and A events")
            #expect(Set(received.map(\.type)) == [.a, .aaaa])
            for event in received {
                guard case .answer(let answer) = event else {
                    Issue.record("unexpected \(event)")
                    continue
                }
                #expect(answer.source == .network)
                #expect(answer.ttl == 30)
                #expect(answer.outcome == .records)
                #expect(answer.duration > .zero && answer.duration < .seconds(2 * Int64(SanitizerSlowdown.factor)))
                #expect(answer.addresses == [answer.question.type == .a ? DNSIPAddress("10.77.0.2") : DNSIPAddress("fd77::2")])
            }
            let combined = await resolver.lookUpAddresses("dual.test")
            #expect(combined.addresses.map(\.description) == ["fd77::2", "10.77.0.2"])
            #expect(try combined.ipv4.get().source == .cache)

            var streamed: [DNSRecordType] = []
            for await event in resolver.addressLookupEvents("v4only.test") {
                streamed.append(event.type)
                if case .answer(let answer) = event, answer.question.type == .aaaa { #expect(answer.outcome == .noData) }
            }
            #expect(streamed.count == 2)
        }
    }

    @Test func followsCNAME() async throws {
        try await withDnsmasq { dnsmasq in
            let answer = try await dnsmasq.resolver().query("alias.test", type: .a)
            #expect(answer.outcome == .records)
            #expect(answer.aliases == [try DNSName("dual.test")])
            #expect(answer.canonicalName == (try DNSName("dual.test")))
            #expect(answer.addresses.map(\.description) == ["10.77.0.2"])
        }
    }

    @Test func queriesSRVAndTXT() async throws {
        try await withDnsmasq { dnsmasq in
            let resolver = try dnsmasq.resolver()
            let srv = try await resolver.query("_x._tcp.test", type: .srv)
            #expect(srv.records.map(\.data) == [.srv(DNSServiceRecord(priority: 0, weight: 5, port: 443, target: try DNSName("dual.test")))])
            let txt = try await resolver.query("t.test", type: .txt)
            #expect(txt.records.map(\.data) == [.txt([Array("a=1".utf8), Array("second".utf8)])])
        }
    }

    @Test func distinguishesNXDOMAINFromNODATA() async throws {
        try await withDnsmasq { dnsmasq in
            let resolver = try dnsmasq.resolver()
            let missing = try await resolver.query("nope.test", type: .a)
            #expect(missing.outcome == .nameDoesNotExist)
            #expect(missing.records.isEmpty)
            let noData = try await resolver.query("v4only.test", type: .aaaa)
            #expect(noData.outcome == .noData)
            // Both are cached as negative answers.
            #expect(try await resolver.query("nope.test", type: .a).source == .cache)
        }
    }

    @Test func cacheHonoursTTLAndServesStale() async throws {
        try await withDnsmasq { dnsmasq in
            let clock = FakeClock()
            let cache = DNSCache(clock: clock.dnsClock)
            let resolver = try dnsmasq.resolver(cache: cache, clock: clock.dnsClock)
            #expect(try await resolver.query("dual.test", type: .a).source == .network)
            clock.advance(.seconds(20))
            let cached = try await resolver.query("dual.test", type: .a)
            #expect(cached.source == .cache && cached.ttl == 10)
            clock.advance(.seconds(11))
            #expect(try await resolver.query("dual.test", type: .a).source == .network)

            // Expired with stale allowed: the stale answer at once, then a background refresh.
            clock.advance(.seconds(31))
            let stale = try await resolver.query("dual.test", type: .a, allowStale: true)
            #expect(stale.source == .staleCache)
            #expect(stale.addresses.map(\.description) == ["10.77.0.2"])
            var refreshed = false
            for _ in 0..<100 where !refreshed {
                await pause(milliseconds: 20)
                refreshed = cache.lookup(DNSQuestion(name: try DNSName("dual.test"), type: .a))?.source == .cache
            }
            #expect(refreshed)
        }
    }

    @Test func expandsSearchDomains() async throws {
        try await withDnsmasq { dnsmasq in
            let resolver = try dnsmasq.resolver(searchDomains: ["nothere.test", "test"])
            let answer = try await resolver.query("dual", type: .aaaa)
            #expect(answer.question.name == (try DNSName("dual.test")))
            #expect(answer.addresses.map(\.description) == ["fd77::2"])
            // Nothing matches anywhere: NXDOMAIN after trying every candidate.
            #expect(try await resolver.query("absent", type: .a).outcome == .nameDoesNotExist)
        }
    }

    @Test(arguments: [UInt16?.none, 1232])
    func fallsBackToTCPWhenTruncated(ednsPayloadSize: UInt16?) async throws {
        try await withDnsmasq { dnsmasq in
            let resolver = try dnsmasq.resolver(ednsPayloadSize: ednsPayloadSize)
            let answer = try await resolver.query("many.test", type: .a)
            // Over UDP dnsmasq fits 30 (plain) or 75 (EDNS 1232) of them and sets TC.
            #expect(answer.records.count == 100)
            #expect(Set(answer.addresses).count == 100)
        }
    }

    @Test func hostsFileComesFirst() async throws {
        try await withDnsmasq { dnsmasq in
            let resolver = try dnsmasq.resolver(hosts: HostsFile(parsing: "192.0.2.9 dual.test\n"))
            let result = await resolver.lookUpAddresses("dual.test")
            #expect(try result.ipv4.get().source == .hosts)
            #expect(result.addresses.map(\.description) == ["192.0.2.9"])
            #expect(try result.ipv6.get().outcome == .noData)
            let literal = try await resolver.query("2001:db8::1", type: .aaaa)
            #expect(literal.source == .literal && literal.addresses.map(\.description) == ["2001:db8::1"])
        }
    }

    @Test func reportsTimeoutWhenNobodyAnswers() async throws {
        let port = try #require(freeLoopbackPort())
        let resolver = DNSResolver(
            configuration: DNSResolverConfiguration(
                nameservers: [try SocketAddress(ipAddress: "127.0.0.1", port: Int(port))], timeout: .milliseconds(150),
                attempts: 2),
            cache: DNSCache())
        let started = NIODeadline.now()
        await #expect(throws: DNSResolverError.timedOut) { try await resolver.query("x.test", type: .a) }
        let elapsed = NIODeadline.now() - started
        #expect(elapsed >= .milliseconds(280) && elapsed < .seconds(2 * Int64(SanitizerSlowdown.factor)))
    }
}

/// Record types beyond addresses, the nsswitch fallback, cancellation and a latency figure.
@Suite("Resolver: other types and paths", .serialized)
struct ResolverOtherTests {
    /// HTTPS (type 65) as raw RDATA in dnsmasq: priority 1, target ".", alpn=h3, port=3000.
    private static let records = standardRecords + [
        "--dns-rr=svc.test,65,00010000010003026833000300020bb8",
        "--ptr-record=4.0.77.10.in-addr.arpa,v4only.test",
        "--ptr-record=2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.7.7.d.f.ip6.arpa,dual.test",
    ]

    @Test func queriesHTTPS() async throws {
        try await withDnsmasq(records: Self.records) { dnsmasq in
            let answer = try await dnsmasq.resolver().query("svc.test", type: .https)
            guard case .serviceBinding(let binding)? = answer.records.first?.data else {
                Issue.record("no HTTPS record in \(answer)")
                return
            }
            #expect(binding.priority == 1 && binding.targetName == .root)
            #expect(binding.alpnProtocols == ["h3"])
            #expect(binding.port == 3000)
        }
    }

    @Test func queriesPTR() async throws {
        try await withDnsmasq(records: Self.records) { dnsmasq in
            let resolver = try dnsmasq.resolver()
            let v4 = try #require(DNSIPAddress("10.77.0.4"))
            #expect(v4.reverseLookupName.description == "4.0.77.10.in-addr.arpa")
            let answer = try await resolver.query(v4.reverseLookupName.description + ".", type: .ptr)
            #expect(answer.records.map(\.data) == [.ptr(try DNSName("v4only.test"))])
            let v6 = try #require(DNSIPAddress("fd77::2"))
            let answer6 = try await resolver.query(v6.reverseLookupName.description + ".", type: .ptr)
            #expect(answer6.records.map(\.data) == [.ptr(try DNSName("dual.test"))])
        }
    }

    @Test func fallsBackToGetaddrinfoWhenNSSwitchSaysSo() async throws {
        // The nameserver is unreachable on purpose: only getaddrinfo (and /etc/hosts, which
        // maps localhost to 127.0.0.1 here) can answer.
        let resolver = DNSResolver(
            configuration: DNSResolverConfiguration(
                nameservers: [try SocketAddress(ipAddress: "127.0.0.1", port: 9)], timeout: .milliseconds(100), attempts: 1,
                nsswitch: NSSwitchHosts(parsing: "hosts: files myhostname dns")),
            cache: DNSCache())
        let answer = try await resolver.query("localhost", type: .a)
        #expect(answer.source == .system)
        #expect(answer.addresses.contains(.v4(DNSIPv4Address(127, 0, 0, 1))))
    }

    @Test func asksTheNextServerWhenOneIsSilent() async throws {
        try await withDnsmasq { dnsmasq in
            // dnsmasq's first answer can be slow on a busy machine (just started): one query of
            // its own first, so that the 200 ms timeout below times only the silent server.
            _ = try await dnsmasq.resolver().query("v4only.test", type: .a)
            // Silent: a socket that takes the query and never answers (a port with nothing on it
            // would not be silent: the kernel answers with port unreachable).
            let hole = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            defer { close(hole) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(hole, $0, length) == 0 && getsockname(hole, $0, &length) == 0 }
            }
            try #require(bound)
            let silent = try SocketAddress(ipAddress: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)))
            let resolver = try dnsmasq.resolver(timeout: .milliseconds(200), nameserversBefore: [silent])
            let answer = try await resolver.query("dual.test", type: .a)
            #expect(answer.addresses.map(\.description) == ["10.77.0.2"])
            // It waited out the silent server once, then asked the next: the silent one got one
            // query, not a second round. (Counted rather than timed: the suite's CPU-bound tests
            // can starve the event loops for a second, which a wall-clock bound would count.)
            var queries = 0
            var scratch = [UInt8](repeating: 0, count: 512)
            while recv(hole, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 { queries += 1 }
            #expect(queries == 1, "the silent server was asked \(queries) times")
            #expect(answer.duration >= .milliseconds(200), "answered after \(answer.duration), before the silent server's timeout")
        }
    }

    @Test func usesAnIPv6Nameserver() async throws {
        try await withDnsmasq(listenAddress: "::1") { dnsmasq in
            let result = await (try dnsmasq.resolver()).lookUpAddresses("dual.test")
            #expect(result.addresses.map(\.description) == ["fd77::2", "10.77.0.2"])
            let many = try await dnsmasq.resolver().query("many.test", type: .a)
            #expect(many.records.count == 100)  // truncated over UDP, so TCP over IPv6 too
        }
    }

    @Test func cancelledLookupDeliversNothing() async throws {
        // A server that never answers: the lookups would time out after 5 s.
        let port = try #require(freeLoopbackPort())
        let resolver = DNSResolver(
            configuration: DNSResolverConfiguration(
                nameservers: [try SocketAddress(ipAddress: "127.0.0.1", port: Int(port))], timeout: .seconds(5), attempts: 1),
            cache: DNSCache())
        let events = Recorder<DNSAddressLookupEvent>()
        let lookup = resolver.lookUpAddresses("slow.test") { events.append($0) }
        #expect(await Self.outstandingQueries(of: resolver, become: 2), "AAAA and A are on the wire")
        let started = NIODeadline.now()
        lookup.cancel()
        await lookup.wait()
        #expect(NIODeadline.now() - started < .seconds(Int64(SanitizerSlowdown.factor)))
        #expect(events.count == 0)
        // Cancelled, not just ignored: both query sockets are closed long before the timeout.
        #expect(await Self.outstandingQueries(of: resolver, become: 0))
    }

    /// Waits up to 2 s for `resolver` to have `count` queries on the wire.
    static func outstandingQueries(of resolver: DNSResolver, become count: Int) async -> Bool {
        for _ in 0..<200 {
            if resolver.outstandingQueries == count { return true }
            await pause(milliseconds: 10)
        }
        return resolver.outstandingQueries == count
    }

    /// Not a benchmark: a sanity bound, and the figure printed for the report.
    @Test func measuresLatency() async throws {
        try await withDnsmasq(records: Self.records) { dnsmasq in
            let resolver = try dnsmasq.resolver()
            var network: [TimeAmount] = []
            for index in 0..<100 {
                // Distinct NXDOMAIN names, so each one goes to the server.
                network.append(try await resolver.query("n\(index).test", type: .a).duration)
            }
            var cached: [TimeAmount] = []
            for index in 0..<100 { cached.append(try await resolver.query("n\(index).test", type: .a).duration) }
            let medianNetwork = network.sorted()[50]
            let medianCache = cached.sorted()[50]
            print("NetworkDNS latency vs dnsmasq on loopback: median network \(medianNetwork.nanoseconds / 1000) µs, cache \(medianCache.nanoseconds / 1000) µs")
            #expect(medianNetwork < .milliseconds(50 * Int64(SanitizerSlowdown.factor)))
            #expect(medianCache < .milliseconds(5 * Int64(SanitizerSlowdown.factor)))
        }
    }
}
