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
            let events = Recorder<DNSAddressEvent>()
            resolver.resolveAddresses("dual.test") { events.append($0) }
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
                #expect(answer.duration > .zero && answer.duration < .seconds(2))
                #expect(answer.addresses == [answer.question.type == .a ? DNSIPAddress("10.77.0.2") : DNSIPAddress("fd77::2")])
            }
            let combined = await resolver.resolveAddresses("dual.test")
            #expect(combined.addresses.map(\.description) == ["fd77::2", "10.77.0.2"])
            #expect(try combined.ipv4.get().source == .cache)

            var streamed: [DNSRecordType] = []
            for await event in resolver.addressEvents("v4only.test") {
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
            let result = await resolver.resolveAddresses("dual.test")
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
        #expect(elapsed >= .milliseconds(280) && elapsed < .seconds(2))
    }
}
