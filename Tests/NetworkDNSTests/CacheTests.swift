import NIOCore
import Testing
@testable import NetworkDNS

@Suite("DNS cache")
struct CacheTests {
    private func answer(_ name: String, type: DNSRecordType = .a, ttl: UInt32, outcome: DNSAnswer.Outcome = .records) throws -> DNSAnswer {
        let owner = try DNSName(name)
        let records = outcome == .records
            ? [DNSResourceRecord(name: owner, type: type, ttl: ttl, data: .a(DNSIPv4Address(10, 0, 0, 1)))] : []
        return DNSAnswer(question: DNSQuestion(name: owner, type: type), outcome: outcome, records: records, ttl: ttl, source: .network)
    }

    @Test func honoursTTLAndServesStaleOnlyWhenAsked() throws {
        let clock = FakeClock()
        let cache = DNSCache(capacity: 10, maximumStaleness: .seconds(600), clock: clock.dnsClock)
        cache.insert(try answer("Host.Example", ttl: 30))
        let question = DNSQuestion(name: try DNSName("host.example"), type: .a)

        let fresh = try #require(cache.lookup(question))
        #expect(fresh.source == .cache)
        #expect(fresh.ttl == 30)
        #expect(fresh.addresses == [.v4(DNSIPv4Address(10, 0, 0, 1))])

        clock.advance(.milliseconds(12_500))
        #expect(cache.lookup(question)?.ttl == 18)  // 17.5 s left, rounded up

        clock.advance(.seconds(18))
        #expect(cache.lookup(question) == nil)
        let stale = try #require(cache.lookup(question, allowStale: true))
        #expect(stale.source == .staleCache)
        #expect(stale.ttl == 0)

        clock.advance(.seconds(601))
        #expect(cache.lookup(question, allowStale: true) == nil)
        #expect(cache.count == 0)
    }

    @Test func keysOnNameTypeAndClass() throws {
        let cache = DNSCache(clock: FakeClock().dnsClock)
        cache.insert(try answer("a.example", ttl: 10))
        let name = try DNSName("A.EXAMPLE")
        #expect(cache.lookup(DNSQuestion(name: name, type: .a)) != nil)
        #expect(cache.lookup(DNSQuestion(name: name, type: .aaaa)) == nil)
        #expect(cache.lookup(DNSQuestion(name: name, type: .a, recordClass: DNSClass(rawValue: 3))) == nil)
    }

    @Test func cachesNegativeAnswersAndSkipsZeroTTL() throws {
        let clock = FakeClock()
        let cache = DNSCache(clock: clock.dnsClock)
        cache.insert(try answer("gone.example", ttl: 5, outcome: .nameDoesNotExist))
        cache.insert(try answer("now.example", ttl: 0))
        #expect(cache.lookup(DNSQuestion(name: try DNSName("gone.example"), type: .a))?.outcome == .nameDoesNotExist)
        #expect(cache.lookup(DNSQuestion(name: try DNSName("now.example"), type: .a)) == nil)
        clock.advance(.seconds(6))
        #expect(cache.lookup(DNSQuestion(name: try DNSName("gone.example"), type: .a)) == nil)
    }

    @Test func evictsOldestWhenFull() throws {
        let cache = DNSCache(capacity: 3, clock: FakeClock().dnsClock)
        for index in 0..<3 { cache.insert(try answer("n\(index).example", ttl: 60)) }
        // Replacing n0 makes it the newest; n1 is now the oldest.
        cache.insert(try answer("n0.example", ttl: 60))
        cache.insert(try answer("n3.example", ttl: 60))
        #expect(cache.count == 3)
        let present = try (0..<4).map { cache.lookup(DNSQuestion(name: try DNSName("n\($0).example"), type: .a)) != nil }
        #expect(present == [true, false, true, true])
        for index in 0..<1000 { cache.insert(try answer("bulk\(index).example", ttl: 60)) }
        #expect(cache.count == 3)
    }

    @Test func negativeTTLComesFromSOAAndIsCapped() throws {
        let name = try DNSName("missing.example")
        func response(soaTTL: UInt32, minimum: UInt32) throws -> DNSMessage {
            DNSMessage(
                header: DNSHeader(id: 1, isResponse: true, responseCode: .nameError),
                questions: [DNSQuestion(name: name, type: .a)],
                authorities: [
                    DNSResourceRecord(
                        name: try DNSName("example"), type: .soa, ttl: soaTTL,
                        data: .soa(DNSStartOfAuthority(primaryServer: .root, responsibleMailbox: .root, serial: 1, refresh: 1, retry: 1, expire: 1, minimum: minimum)))
                ])
        }
        let small = DNSAnswerInterpreter(response: try response(soaTTL: 900, minimum: 60), name: name, type: .a, recordClass: .internet, maximumNegativeTTL: 300, defaultNegativeTTL: 5)
        #expect(small.outcome == .nameDoesNotExist && small.ttl == 60)
        let capped = DNSAnswerInterpreter(response: try response(soaTTL: 86400, minimum: 86400), name: name, type: .a, recordClass: .internet, maximumNegativeTTL: 300, defaultNegativeTTL: 5)
        #expect(capped.ttl == 300)
    }

    @Test func interpreterFollowsChainAndIgnoresStrayRecords() throws {
        let name = try DNSName("www.example")
        let edge = try DNSName("edge.cdn")
        let response = DNSMessage(
            header: DNSHeader(id: 1, isResponse: true),
            questions: [DNSQuestion(name: name, type: .a)],
            answers: [
                DNSResourceRecord(name: try DNSName("bank.example"), type: .a, ttl: 99, data: .a(DNSIPv4Address(6, 6, 6, 6))),
                DNSResourceRecord(name: try DNSName("WWW.example"), type: .cname, ttl: 50, data: .cname(edge)),
                DNSResourceRecord(name: edge, type: .a, ttl: 20, data: .a(DNSIPv4Address(1, 1, 1, 1))),
                DNSResourceRecord(name: edge, type: .a, ttl: 40, data: .a(DNSIPv4Address(1, 1, 1, 2))),
            ])
        let result = DNSAnswerInterpreter(response: response, name: name, type: .a, recordClass: .internet, maximumNegativeTTL: 300, defaultNegativeTTL: 5)
        #expect(result.outcome == .records)
        #expect(result.aliases == [edge])
        #expect(result.ttl == 20)
        #expect(result.records.count == 2)
        // A CNAME loop ends as NODATA instead of spinning.
        let loop = DNSMessage(
            header: DNSHeader(id: 1, isResponse: true), questions: [DNSQuestion(name: name, type: .a)],
            answers: [
                DNSResourceRecord(name: name, type: .cname, ttl: 5, data: .cname(edge)),
                DNSResourceRecord(name: edge, type: .cname, ttl: 5, data: .cname(name)),
            ])
        #expect(DNSAnswerInterpreter(response: loop, name: name, type: .a, recordClass: .internet, maximumNegativeTTL: 300, defaultNegativeTTL: 5).outcome == .noData)
    }
}
