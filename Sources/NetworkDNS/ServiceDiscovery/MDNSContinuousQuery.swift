import NIOCore

/// One question an mDNS querier keeps asking while someone browses (RFC 6762 §5.2, §7): the
/// first query after a random 20–120 ms, then at intervals that double from one second up to an
/// hour, each listing the answers already known (§7.1) so responders stay quiet about them. A
/// query another host sends for the same question, listing at least what we know, counts as
/// ours (duplicate question suppression, §7.3): ours then waits as if we had sent it. A value type: the caller sends and wakes.
package struct MDNSContinuousQuery: Sendable {
    package enum Action: Equatable, Sendable {
        /// Send this query to the mDNS group.
        case send(DNSMessage)
        /// Call `wake(now:cache:)` after this long (replacing any earlier wake-up).
        case wake(after: TimeAmount)
    }

    package let question: DNSQuestion
    /// The interval to wait after the next query.
    private var interval = TimeAmount.seconds(1)
    /// When the next query is due; nil before `start` and after `stop`.
    private var due: NIODeadline?

    package static let firstInterval = TimeAmount.seconds(1)
    package static let longestInterval = TimeAmount.seconds(3600)

    package init(question: DNSQuestion) {
        self.question = question
    }

    /// Starts asking: the first query after `initialDelay` (§5.2: random, 20–120 ms).
    package mutating func start(now: NIODeadline, initialDelay: TimeAmount) -> [Action] {
        interval = Self.firstInterval
        due = now + initialDelay
        return [.wake(after: initialDelay)]
    }

    /// A wake-up: the query, if it is due, with the known answers of `cache`.
    package mutating func wake(now: NIODeadline, cache: MDNSCache) -> [Action] {
        guard let due else { return [] }
        guard now >= due else { return [.wake(after: due - now)] }
        let known = cache.knownAnswers(name: question.name, type: question.type, now: now)
        let query = DNSMessage(
            header: DNSHeader(id: 0, recursionDesired: false), questions: [question], answers: known)
        let wait = interval
        self.due = now + wait
        interval = min(interval * 2, Self.longestInterval)
        return [.send(query), .wake(after: wait)]
    }

    /// A query from another host on the link: if it asks our question and lists every answer we
    /// would have listed, it stands for our next one, which then waits an interval from now (§7.3).
    package mutating func received(_ message: DNSMessage, now: NIODeadline, cache: MDNSCache) -> [Action] {
        guard let due, !message.header.isResponse,
            message.questions.contains(where: { Self.sameQuestion($0, question) })
        else { return [] }
        let ours = cache.knownAnswers(name: question.name, type: question.type, now: now)
        let listed = ours.allSatisfy { known in message.answers.contains { $0.type == known.type && $0.data == known.data } }
        guard listed, due > now else { return [] }
        // As if we had sent it: the next one an interval later, the interval doubling.
        let wait = interval
        self.due = now + wait
        interval = min(interval * 2, Self.longestInterval)
        return [.wake(after: wait)]
    }

    /// Stops asking.
    package mutating func stop() {
        due = nil
    }

    private static func sameQuestion(_ a: DNSQuestion, _ b: DNSQuestion) -> Bool {
        a.type == b.type && a.name.equalsIgnoringCase(b.name)
            && a.recordClass.withoutMDNSBit == b.recordClass.withoutMDNSBit
    }
}
