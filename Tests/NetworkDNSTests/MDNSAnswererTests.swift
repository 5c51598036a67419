import NIOCore
import Testing

@testable import NetworkDNS

/// `MDNSAnswerer`: which owned records answer a query and how the reply travels (RFC 6762
/// §5–§8, RFC 6763 §12). The queries and replies are values handed in and out; no socket is
/// opened and nothing is sent, so no network namespace is needed here (the socket side's tests
/// will run in namespaces).
@Suite("DNS.MDNSAnswerer")
struct MDNSAnswererTests {
    typealias Reply = MDNSAnswerer.Reply
    static let now = NIODeadline.uptimeNanoseconds(100_000_000_000)
    static let delay = TimeAmount.milliseconds(60)
    static let host = try! DNSName("linux.local.")

    /// A registered service's records and the host's address.
    static var owned: [MDNSRecord] {
        var records = try! MDNSService(instance: "Printer", type: "_ipp._tcp", host: host, port: 631).records()
        records.append(MDNSRecord(DNSResourceRecord(name: host, type: .a, ttl: 120, data: .a(DNSIPv4Address(rawValue: 0x0A00_0002))), unique: true))
        return records
    }

    static func query(_ name: String, _ type: DNSRecordType, qu: Bool = false, id: UInt16 = 0, known: [DNSResourceRecord] = [], probe: [DNSResourceRecord] = []) -> DNSMessage {
        DNSMessage(
            header: DNSHeader(id: id, recursionDesired: false),
            questions: [DNSQuestion(name: try! DNSName(name), type: type, recordClass: DNSClass(rawValue: qu ? 0x8001 : 1))],
            answers: known, authorities: probe)
    }

    static func message(_ reply: Reply?) -> DNSMessage? {
        switch reply {
        case .multicast(let message, _), .unicast(let message): return message
        case nil: return nil
        }
    }

    @Test("a browse (PTR) is answered after the shared delay, with SRV, TXT and the address as additional records")
    func browse() throws {
        var answerer = MDNSAnswerer()
        let replies = answerer.replies(to: Self.query("_ipp._tcp.local.", .ptr), fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay)
        #expect(replies.count == 1)
        guard case .multicast(let message, let delay) = replies.first else { throw Failure() }
        #expect(delay == Self.delay)
        #expect(message.header.isResponse && message.header.isAuthoritative && message.header.id == 0 && message.questions.isEmpty)
        #expect(message.answers.map(\.type) == [.ptr])
        #expect(message.additionals.map(\.type) == [.srv, .txt, .a])
        #expect(message.additionals.allSatisfy { $0.recordClass.rawValue == 0x8001 }, "unique records carry the cache-flush bit")
        #expect(try DNSMessage(decoding: message.encoded()) == message)
    }

    @Test("unique records (SRV by name) go at once; ANY gives every record of the name; other names get nothing")
    func uniqueAndAny() {
        var answerer = MDNSAnswerer()
        let srv = answerer.replies(to: Self.query("printer._IPP._tcp.local.", .srv), fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay)
        guard case .multicast(let message, let delay) = srv.first else { Issue.record("no reply"); return }
        #expect(delay == .zero)
        #expect(message.answers.map(\.type) == [.srv])
        #expect(message.additionals.map(\.type) == [.a], "the SRV's target address")
        let any = answerer.replies(to: Self.query("Printer._ipp._tcp.local.", .any), fromPort: 5353, owned: Self.owned, now: Self.now + .seconds(2), sharedDelay: Self.delay)
        #expect(Self.message(any.first)?.answers.map(\.type) == [.srv, .txt])
        #expect(answerer.replies(to: Self.query("other._ipp._tcp.local.", .any), fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay).isEmpty)
    }

    @Test("known answers with at least half our TTL are left out; with less they are repeated")
    func knownAnswerSuppression() throws {
        var answerer = MDNSAnswerer()
        let ptr = try #require(Self.owned.first { $0.record.type == .ptr && $0.record.name == (try? DNSName("_ipp._tcp.local.")) }).record
        var fresh = ptr
        fresh.ttl = ptr.ttl / 2
        #expect(answerer.replies(to: Self.query("_ipp._tcp.local.", .ptr, known: [fresh]), fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay).isEmpty)
        var stale = ptr
        stale.ttl = ptr.ttl / 2 - 1
        #expect(answerer.replies(to: Self.query("_ipp._tcp.local.", .ptr, known: [stale]), fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay).count == 1)
    }

    @Test("a legacy query (not from port 5353) gets a unicast reply with its ID and question, TTLs of 10 s, no cache-flush bits")
    func legacyUnicast() {
        var answerer = MDNSAnswerer()
        let replies = answerer.replies(to: Self.query("printer._ipp._tcp.local.", .srv, id: 0x1234), fromPort: 40000, owned: Self.owned, now: Self.now, sharedDelay: Self.delay)
        guard case .unicast(let message) = replies.first, replies.count == 1 else { Issue.record("\(replies)"); return }
        #expect(message.header.id == 0x1234)
        #expect(message.questions.map(\.type) == [.srv])
        #expect((message.answers + message.additionals).allSatisfy { $0.ttl <= 10 && $0.recordClass == .internet })
    }

    @Test("QU questions are answered by unicast, unless the record was multicast less than a quarter TTL ago")
    func unicastResponseBit() {
        var answerer = MDNSAnswerer()
        let first = answerer.replies(to: Self.query("printer._ipp._tcp.local.", .srv, qu: true), fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay)
        guard case .unicast = first.first else { Issue.record("\(first)"); return }
        _ = answerer.replies(to: Self.query("printer._ipp._tcp.local.", .srv), fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay)
        let second = answerer.replies(to: Self.query("printer._ipp._tcp.local.", .srv, qu: true), fromPort: 5353, owned: Self.owned, now: Self.now + .seconds(10), sharedDelay: Self.delay)
        guard case .multicast = second.first else { Issue.record("\(second)"); return }
    }

    @Test("a record is multicast at most once a second, but a probe for our name is always answered at once")
    func rateLimitAndDefence() throws {
        var answerer = MDNSAnswerer()
        let query = Self.query("printer._ipp._tcp.local.", .srv)
        #expect(answerer.replies(to: query, fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay).count == 1)
        #expect(answerer.replies(to: query, fromPort: 5353, owned: Self.owned, now: Self.now + .milliseconds(500), sharedDelay: Self.delay).isEmpty)
        #expect(answerer.replies(to: query, fromPort: 5353, owned: Self.owned, now: Self.now + .milliseconds(1500), sharedDelay: Self.delay).count == 1)
        // Another host probing for "Printer": its proposed SRV in the authority section.
        let theirs = try MDNSService(instance: "Printer", type: "_ipp._tcp", host: try DNSName("other.local."), port: 1).records()
            .filter(\.unique).map(\.record)
        let probe = Self.query("Printer._ipp._tcp.local.", .any, qu: true, probe: theirs)
        let defence = answerer.replies(to: probe, fromPort: 5353, owned: Self.owned, now: Self.now + .milliseconds(1600), sharedDelay: Self.delay)
        guard case .multicast(let message, let delay) = defence.last else { Issue.record("\(defence)"); return }
        #expect(delay == .zero)
        #expect(message.answers.map(\.type) == [.srv, .txt])
    }

    @Test("responses and queries with another opcode get nothing")
    func notQueries() {
        var answerer = MDNSAnswerer()
        var response = Self.query("_ipp._tcp.local.", .ptr)
        response.header.isResponse = true
        #expect(answerer.replies(to: response, fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay).isEmpty)
        var update = Self.query("_ipp._tcp.local.", .ptr)
        update.header.opcode = 5
        #expect(answerer.replies(to: update, fromPort: 5353, owned: Self.owned, now: Self.now, sharedDelay: Self.delay).isEmpty)
    }

    struct Failure: Error {}
}
