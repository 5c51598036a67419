import NIOCore
import NetworkSync

/// The per-process answer cache: positive and negative answers, each kept for its TTL and,
/// past it, for `maximumStaleness` more so callers that allow stale answers (optimistic DNS,
/// `expiredDNSBehavior = .allow`) can use them while a refresh runs. Bounded in entries; when
/// full, the oldest insertion goes first.
package final class DNSCache: Sendable {
    /// The cache every resolver in the process shares unless given its own.
    package static let shared = DNSCache()

    private struct Entry {
        var answer: DNSAnswer
        var expires: NIODeadline
        var sequence: UInt64
    }

    private struct State {
        var entries: [DNSCacheKey: Entry] = [:]
        /// Insertion order; entries replaced since are skipped lazily by their sequence.
        var order: [(key: DNSCacheKey, sequence: UInt64)] = []
        var orderStart = 0
        var nextSequence: UInt64 = 0
    }

    private let state = Lock(State())
    /// Most entries kept at once.
    package let capacity: Int
    /// How long past its TTL an entry may still be handed out as stale.
    package let maximumStaleness: TimeAmount
    /// Where entry ages are measured; tests pass a fake clock.
    package let clock: DNSClock

    /// A separate cache (tests, or a resolver that must not share answers).
    package init(capacity: Int = 4096, maximumStaleness: TimeAmount = .hours(24), clock: DNSClock = .system) {
        self.capacity = max(1, capacity)
        self.maximumStaleness = maximumStaleness
        self.clock = clock
    }

    /// Stores `answer` for `answer.ttl` seconds from now under its question. A TTL of 0 means
    /// "do not cache" (RFC 1035), so nothing is stored.
    package func insert(_ answer: DNSAnswer) {
        guard answer.ttl > 0 else { return }
        let key = DNSCacheKey(answer.question)
        let expires = clock.now() + .seconds(Int64(answer.ttl))
        state.withLock { state in
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.entries[key] = Entry(answer: answer, expires: expires, sequence: sequence)
            state.order.append((key, sequence))
            while state.entries.count > capacity, state.orderStart < state.order.count {
                let oldest = state.order[state.orderStart]
                state.orderStart += 1
                if state.entries[oldest.key]?.sequence == oldest.sequence {
                    state.entries[oldest.key] = nil
                }
            }
            // Drop the consumed prefix once it dominates, so the order list stays O(capacity).
            if state.orderStart > 64 && state.orderStart * 2 > state.order.count {
                state.order.removeFirst(state.orderStart)
                state.orderStart = 0
            }
        }
    }

    /// The cached answer to `question`: with its remaining TTL and source `.cache` while
    /// fresh; once expired, only when `allowStale`, as source `.staleCache` with TTL 0. Entries
    /// past the staleness window are removed.
    package func lookup(_ question: DNSQuestion, allowStale: Bool = false) -> DNSAnswer? {
        let key = DNSCacheKey(question)
        let now = clock.now()
        return state.withLock { state -> DNSAnswer? in
            guard let entry = state.entries[key] else { return nil }
            var answer = entry.answer
            answer.question = question
            answer.duration = .zero
            if now < entry.expires {
                let remaining = (entry.expires - now).nanoseconds
                // Round up: an entry with 0.4 s left is still valid, so it must not say 0.
                answer.ttl = UInt32(clamping: (remaining + 999_999_999) / 1_000_000_000)
                answer.source = .cache
                return answer
            }
            if now - entry.expires > maximumStaleness {
                state.entries[key] = nil
                return nil
            }
            guard allowStale else { return nil }
            answer.ttl = 0
            answer.source = .staleCache
            return answer
        }
    }

    /// Forgets `question`'s entry.
    package func remove(_ question: DNSQuestion) {
        state.withLock { _ = $0.entries.removeValue(forKey: DNSCacheKey(question)) }
    }

    /// Forgets everything (e.g. when the network changes).
    package func removeAll() {
        state.withLock { $0 = State() }
    }

    /// Number of entries held, fresh or stale.
    package var count: Int { state.withLock { $0.entries.count } }
}
