import NIOCore

/// What an mDNS responder says to one query (RFC 6762 §5–§7, RFC 6763 §12), given the records it
/// owns: which of them answer, which go along as additional records, and how the reply travels.
/// - Questions match records by name (any letter case), type (or `ANY`) and class.
/// - A record the query already lists as known with at least half its TTL left is left out
///   (known-answer suppression, §7.1).
/// - Answers to a PTR come with the SRV, TXT and address records that make them usable (§12).
/// - A query from a port other than 5353 is a "legacy" one-shot query (§6.7): the reply goes back
///   to it by unicast, with the query's ID and question, TTLs of at most 10 s and no cache-flush
///   bits. A question with the unicast-response bit (QU, §5.4) is answered by unicast too, unless
///   the record was multicast less than a quarter of its TTL ago. Everything else is multicast:
///   at once when only unique records answer, after a random 20–120 ms (drawn by the caller)
///   when shared ones do, so that answers from several hosts spread out (§6).
/// - A record is multicast at most once a second (§6); a probe for a name we own is always
///   answered at once and to the group, since that is how the name is defended (§8.1).
package struct MDNSAnswerer: Sendable {
    package enum Reply: Equatable, Sendable {
        /// To the group, after `delay`.
        case multicast(DNSMessage, delay: TimeAmount)
        /// To the querier's address and port.
        case unicast(DNSMessage)
    }

    /// When each record (by name, type and RDATA) was last multicast.
    private var lastMulticast: [DNSResourceRecord: NIODeadline] = [:]

    package static let mdnsPort: UInt16 = 5353
    /// How long a multicast is remembered: a quarter of the longest TTL we give (4500 s).
    private static let memory = TimeAmount.seconds(1125)
    package static let legacyTTLLimit: UInt32 = 10

    package init() {}

    /// The replies to `query` from UDP port `sourcePort`. `sharedDelay` is the caller's random
    /// 20–120 ms for replies that carry shared records.
    package mutating func replies(
        to query: DNSMessage, fromPort sourcePort: UInt16, owned: [MDNSRecord], now: NIODeadline, sharedDelay: TimeAmount
    ) -> [Reply] {
        guard !query.header.isResponse, query.header.opcode == 0, !query.questions.isEmpty else { return [] }
        // What was multicast long ago no longer matters (a quarter of the longest TTL).
        lastMulticast = lastMulticast.filter { now - $0.value < Self.memory }
        let legacy = sourcePort != Self.mdnsPort
        var multicastAnswers: [MDNSRecord] = []
        var unicastAnswers: [MDNSRecord] = []
        var defending = false
        for question in query.questions {
            let unicast = legacy || question.recordClass.hasMDNSBit
            let isProbe = query.authorities.contains { $0.name.equalsIgnoringCase(question.name) }
            for record in owned where Self.matches(record.record, question) {
                if Self.isKnown(record.record, in: query) { continue }
                // Defending a name against a probe: to the group, whatever the probe asked, so
                // that every cache sees who holds it.
                let defends = isProbe && record.unique && !legacy
                if defends { defending = true }
                let recentlyMulticast = lastMulticast[Self.key(record.record)].map {
                    (now - $0).nanoseconds * 4 < Int64(record.record.ttl) * 1_000_000_000
                } ?? false
                if unicast && !defends && (legacy || recentlyMulticast == false) {
                    append(record, to: &unicastAnswers)
                } else {
                    append(record, to: &multicastAnswers)
                }
            }
        }
        var replies: [Reply] = []
        if !unicastAnswers.isEmpty {
            replies.append(.unicast(message(unicastAnswers, owned: owned, legacyQuery: legacy ? query : nil)))
        }
        // §6: no record multicast twice within a second (a probe defence always goes).
        multicastAnswers.removeAll { record in
            !defending && lastMulticast[Self.key(record.record)].map { now - $0 < .seconds(1) } == true
        }
        if !multicastAnswers.isEmpty {
            let shared = multicastAnswers.contains { !$0.unique }
            let delay = shared && !defending ? sharedDelay : .zero
            for record in multicastAnswers { lastMulticast[Self.key(record.record)] = now + delay }
            replies.append(.multicast(message(multicastAnswers, owned: owned, legacyQuery: nil), delay: delay))
        }
        return replies
    }

    private func append(_ record: MDNSRecord, to answers: inout [MDNSRecord]) {
        if !answers.contains(record) { answers.append(record) }
    }

    /// A response with `answers` and what makes PTR answers usable in its additional section.
    private func message(_ answers: [MDNSRecord], owned: [MDNSRecord], legacyQuery: DNSMessage?) -> DNSMessage {
        var additionals: [MDNSRecord] = []
        for answer in answers {
            guard case .ptr(let instance) = answer.record.data else { continue }
            for record in owned where record.record.name.equalsIgnoringCase(instance) && [.srv, .txt].contains(record.record.type) {
                if !answers.contains(record) && !additionals.contains(record) { additionals.append(record) }
            }
        }
        for extra in additionals + answers {
            guard case .srv(let service) = extra.record.data else { continue }
            for record in owned where record.record.name.equalsIgnoringCase(service.target) && [.a, .aaaa].contains(record.record.type) {
                if !answers.contains(record) && !additionals.contains(record) { additionals.append(record) }
            }
        }
        guard let legacyQuery else {
            return DNSMessage(
                header: DNSHeader(id: 0, isResponse: true, isAuthoritative: true, recursionDesired: false),
                answers: answers.map(\.responseRecord), additionals: additionals.map(\.responseRecord))
        }
        // A legacy resolver: its ID and question back, short TTLs, no mDNS class bits (§6.7).
        func legacy(_ record: MDNSRecord) -> DNSResourceRecord {
            var plain = record.record
            plain.ttl = min(plain.ttl, Self.legacyTTLLimit)
            return plain
        }
        return DNSMessage(
            header: DNSHeader(id: legacyQuery.header.id, isResponse: true, isAuthoritative: true, recursionDesired: legacyQuery.header.recursionDesired),
            questions: legacyQuery.questions.map { DNSQuestion(name: $0.name, type: $0.type, recordClass: $0.recordClass.withoutMDNSBit) },
            answers: answers.map(legacy), additionals: additionals.map(legacy))
    }

    private static func matches(_ record: DNSResourceRecord, _ question: DNSQuestion) -> Bool {
        let questionClass = question.recordClass.withoutMDNSBit
        return record.name.equalsIgnoringCase(question.name)
            && (question.type == .any || question.type == record.type)
            && (questionClass.rawValue == 255 || questionClass == record.recordClass.withoutMDNSBit)
    }

    /// Listed in the query's answers with at least half our TTL (§7.1).
    private static func isKnown(_ record: DNSResourceRecord, in query: DNSMessage) -> Bool {
        query.answers.contains { known in
            known.name.equalsIgnoringCase(record.name) && known.type == record.type && known.data == record.data
                && UInt64(known.ttl) * 2 >= UInt64(record.ttl)
        }
    }

    private static func key(_ record: DNSResourceRecord) -> DNSResourceRecord {
        var key = record
        key.name = key.name.lowercased()
        key.recordClass = key.recordClass.withoutMDNSBit
        key.ttl = 0
        return key
    }
}
