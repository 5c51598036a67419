import DequeModule

/// The memory behind a QUIC listener's 0-RTT anti-replay (RFC 8446, 8): GnuTLS admits early
/// data only for a ClientHello it has not seen within its window (10 s) and asks this whether
/// the hello's key is new. Bounded: when `capacity` keys are remembered, new early data is
/// refused (the handshake goes on without it, as after a replay), never admitted unchecked.
struct QUICReplayFilter {
    let capacity: Int
    private var seen: Set<[UInt8]> = []
    /// Keys with the time they can be forgotten, in the order they came (GnuTLS's window is
    /// fixed, so expiries grow with it).
    private var order = Deque<(expires: Int, key: [UInt8])>()

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Whether `key` is new at `now` (seconds, as GnuTLS's `time_t`); remembers it until
    /// `expires` if so.
    mutating func admit(_ key: [UInt8], expires: Int, now: Int) -> Bool {
        while let first = order.first, first.expires <= now {
            seen.remove(first.key)
            order.removeFirst()
        }
        guard !seen.contains(key), seen.count < capacity else { return false }
        seen.insert(key)
        order.append((expires, key))
        return true
    }

    /// Keys remembered now.
    var count: Int { seen.count }
}
