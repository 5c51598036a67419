import NIOCore
import Testing

@testable import NetworkCore

/// The value types behind QUIC resumption and 0-RTT: the listener's anti-replay memory, the
/// client's ticket cache, and a stream's bytes sent again after refused early data.
@Suite("QUIC.ResumptionState")
struct QUICResumptionStateTests {
    @Test("the replay filter admits a ClientHello once within its window, forgets it after, and refuses everything new when full")
    func replayFilter() {
        var filter = QUICReplayFilter(capacity: 2)
        let answers = [
            filter.admit([1], expires: 110, now: 100),
            filter.admit([1], expires: 111, now: 101),  // a replay within the window
            filter.admit([2], expires: 112, now: 102),
            filter.admit([3], expires: 113, now: 103),  // full: refused, never admitted unchecked
        ]
        #expect(answers == [true, false, true, false])
        #expect(filter.count == 2)
        let later = [
            filter.admit([1], expires: 120, now: 110),  // the first key's window is over
            filter.admit([1], expires: 121, now: 111),
        ]
        #expect(later == [true, false])
        #expect(filter.count == 2)
    }

    static func resumption(_ tag: UInt8, expires: NIODeadline = .now() + .hours(1)) -> QUICResumption {
        QUICResumption(ticket: [tag], parameters: .init(), chain: [[tag]], expires: expires)
    }

    @Test("the ticket cache hands a server's ticket out once, keeps the newest per server, drops expired ones, and forgets the oldest server beyond its capacity")
    func sessionCache() {
        let cache = QUICSessionCache(capacity: 2)
        let a = QUICSessionCache.Key(server: "a.example", port: 443, applicationProtocols: ["h3"])
        let b = QUICSessionCache.Key(server: "b.example", port: 443, applicationProtocols: ["h3"])
        let c = QUICSessionCache.Key(server: "c.example", port: 443, applicationProtocols: ["h3"])
        let otherProtocol = QUICSessionCache.Key(server: "a.example", port: 443, applicationProtocols: ["echo"])
        cache.store(Self.resumption(1), for: a)
        cache.store(Self.resumption(2), for: a)
        #expect(cache.take(otherProtocol) == nil, "another ALPN is another session")
        #expect(cache.take(a)?.ticket == [2], "the newest ticket")
        #expect(cache.take(a) == nil, "each ticket is used once")
        cache.store(Self.resumption(3, expires: .now() - .seconds(1)), for: a)
        #expect(cache.take(a) == nil, "expired")
        cache.store(Self.resumption(4), for: a)
        cache.store(Self.resumption(5), for: b)
        cache.store(Self.resumption(6), for: c)
        #expect(cache.count == 2)
        #expect(!cache.hasTicket(for: a), "the oldest server went")
        #expect(cache.take(c)?.ticket == [6])
        let short = QUICSessionCache(capacity: 4, lifetime: .milliseconds(1))
        short.store(Self.resumption(7), for: a)
        #expect(short.take(a, now: .now() + .seconds(1)) == nil, "kept no longer than the cache's lifetime")
    }

    @Test("after refused early data, a stream's unacknowledged bytes and its FIN are unsent again, from its first byte")
    func outboxRewind() {
        var outbox = QUICStreamOutbox()
        let appended = outbox.append(ByteBuffer(string: "early"), fin: true)
        #expect(appended)
        outbox.taken(5, fin: true)
        #expect(!outbox.hasUnsent)
        outbox.rewind()
        #expect(outbox.hasUnsent)
        #expect(outbox.sentOffset == 0)
        let (text, fin) = outbox.withUnsent(limit: 4) { pieces, includesFin in
            (pieces.map { String(decoding: $0, as: UTF8.self) }.joined(), includesFin)
        }
        #expect(text == "early")
        #expect(fin)
    }
}
