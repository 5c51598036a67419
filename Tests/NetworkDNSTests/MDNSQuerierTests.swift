import NIOCore
import Testing

@testable import NetworkDNS

/// The querier's value types: `MDNSCache` (TTLs, goodbyes, the cache-flush bit, known answers,
/// a bound) and `MDNSContinuousQuery` (the schedule, known-answer lists, duplicate question
/// suppression), driven by a hand-moved clock. No socket is opened (these are values), so nothing
/// here needs a network namespace.
@Suite("DNS.MDNSQuerier")
struct MDNSQuerierTests {
    static let type = try! DNSName("_ipp._tcp.local.")
    static let start = NIODeadline.uptimeNanoseconds(10_000_000_000)

    static func ptr(_ instance: String, ttl: UInt32 = 4500, flush: Bool = false) -> DNSResourceRecord {
        DNSResourceRecord(
            name: type, type: .ptr, recordClass: DNSClass(rawValue: flush ? 0x8001 : 1), ttl: ttl,
            data: .ptr(try! DNSName(labels: [Array(instance.utf8)]).appending(type)))
    }

    static func txt(_ value: String, flush: Bool = true) -> DNSResourceRecord {
        DNSResourceRecord(
            name: try! DNSName("a._ipp._tcp.local."), type: .txt, recordClass: DNSClass(rawValue: flush ? 0x8001 : 1),
            ttl: 4500, data: .txt([Array(value.utf8)]))
    }

    @Test("records come and go with their TTL; a record heard again is no change and starts its TTL over")
    func ttl() {
        var cache = MDNSCache()
        #expect(cache.insert([Self.ptr("a", ttl: 10)], now: Self.start) == [.added(Self.ptr("a", ttl: 10))])
        #expect(cache.insert([Self.ptr("a", ttl: 10)], now: Self.start + .seconds(8)).isEmpty)
        #expect(cache.expire(now: Self.start + .seconds(12)).isEmpty, "the TTL started over at 8 s")
        #expect(cache.records(name: Self.type, type: .ptr, now: Self.start + .seconds(12)).first?.ttl == 6)
        #expect(cache.nextExpiry == Self.start + .seconds(18))
        #expect(cache.expire(now: Self.start + .seconds(18)) == [.removed(Self.ptr("a", ttl: 10))])
        #expect(cache.count == 0)
    }

    @Test("a goodbye (TTL 0) removes the record one second later")
    func goodbye() {
        var cache = MDNSCache()
        _ = cache.insert([Self.ptr("a")], now: Self.start)
        #expect(cache.insert([Self.ptr("a", ttl: 0)], now: Self.start + .seconds(5)).isEmpty)
        #expect(cache.expire(now: Self.start + .milliseconds(5_900)).isEmpty)
        #expect(cache.expire(now: Self.start + .seconds(6)) == [.removed(Self.ptr("a"))])
        // A goodbye for something never heard changes nothing.
        #expect(cache.insert([Self.ptr("b", ttl: 0)], now: Self.start).isEmpty && cache.count == 0)
    }

    @Test("the cache-flush bit drops older records of the same name and type after a second, not those of the same packet")
    func cacheFlush() {
        var cache = MDNSCache()
        _ = cache.insert([Self.txt("v=1")], now: Self.start)
        let changes = cache.insert([Self.txt("v=2"), Self.txt("extra=1")], now: Self.start + .seconds(5))
        #expect(changes.count == 2)
        let gone = cache.expire(now: Self.start + .seconds(6))
        #expect(gone.count == 1)
        if case .removed(let record) = gone.first { #expect(record.data == .txt([Array("v=1".utf8)])) }
        #expect(cache.records(name: try! DNSName("A._IPP._tcp.local."), type: .txt, now: Self.start + .seconds(7)).count == 2,
                "looked up in any letter case")
    }

    @Test("known answers are those with more than half their TTL left")
    func knownAnswers() {
        var cache = MDNSCache()
        _ = cache.insert([Self.ptr("a", ttl: 100)], now: Self.start)
        _ = cache.insert([Self.ptr("b", ttl: 100)], now: Self.start + .seconds(40))
        let known = cache.knownAnswers(name: Self.type, type: .ptr, now: Self.start + .seconds(60))
        #expect(known.count == 1)
        #expect(known.first?.data == Self.ptr("b").data && known.first?.ttl == 80)
    }

    @Test("a flood of distinct answers stays within the cache's bound, dropping what expires soonest")
    func bounded() {
        var cache = MDNSCache(capacity: 100)
        for index in 0..<1000 {
            _ = cache.insert([Self.ptr("host \(index)", ttl: UInt32(1000 + index))], now: Self.start)
        }
        #expect(cache.count == 100)
        #expect(cache.records(name: Self.type, type: .ptr, now: Self.start).allSatisfy { $0.ttl >= 1900 })
    }

    @Test("continuous querying: first after the initial delay, then 1, 2, 4 s ... capped at an hour, listing known answers")
    func schedule() throws {
        var query = MDNSContinuousQuery(question: DNSQuestion(name: Self.type, type: .ptr))
        var cache = MDNSCache()
        #expect(query.start(now: Self.start, initialDelay: .milliseconds(50)) == [.wake(after: .milliseconds(50))])
        var now = Self.start + .milliseconds(50)
        var waits: [TimeAmount] = []
        var queries: [DNSMessage] = []
        for round in 0..<15 {
            if round == 1 { _ = cache.insert([Self.ptr("a")], now: now) }
            for action in query.wake(now: now, cache: cache) {
                switch action {
                case .send(let message): queries.append(message)
                case .wake(let after): waits.append(after)
                }
            }
            now = now + (waits.last ?? .zero)
        }
        #expect(Array(waits.prefix(5)) == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16)])
        #expect(waits.last == .seconds(3600))
        #expect(queries[0].answers.isEmpty)
        #expect(queries[1].answers.map(\.data) == [Self.ptr("a").data], "the known answer")
        #expect(queries.allSatisfy { $0.header.id == 0 && !$0.header.isResponse && $0.questions.first?.type == .ptr })
        // An early wake-up sends nothing and asks again for the rest.
        var early = MDNSContinuousQuery(question: DNSQuestion(name: Self.type, type: .ptr))
        _ = early.start(now: Self.start, initialDelay: .milliseconds(100))
        #expect(early.wake(now: Self.start + .milliseconds(40), cache: cache) == [.wake(after: .milliseconds(60))])
    }

    @Test("another host's identical query, listing our known answers, stands for our next one; a query missing one does not")
    func duplicateSuppression() {
        var cache = MDNSCache()
        _ = cache.insert([Self.ptr("a")], now: Self.start)
        var query = MDNSContinuousQuery(question: DNSQuestion(name: Self.type, type: .ptr))
        _ = query.start(now: Self.start, initialDelay: .milliseconds(20))
        _ = query.wake(now: Self.start + .milliseconds(20), cache: cache)   // due again at +1.02 s, then 2 s
        let theirs = DNSMessage(
            header: DNSHeader(id: 0, recursionDesired: false),
            questions: [DNSQuestion(name: try! DNSName("_IPP._tcp.local."), type: .ptr, recordClass: DNSClass(rawValue: 0x8001))],
            answers: [Self.ptr("a", ttl: 4000)])
        #expect(query.received(theirs, now: Self.start + .milliseconds(500), cache: cache) == [.wake(after: .seconds(2))])
        var missing = theirs
        missing.answers = []
        #expect(query.received(missing, now: Self.start + .milliseconds(600), cache: cache).isEmpty)
        var response = theirs
        response.header.isResponse = true
        #expect(query.received(response, now: Self.start + .milliseconds(700), cache: cache).isEmpty)
    }
}
