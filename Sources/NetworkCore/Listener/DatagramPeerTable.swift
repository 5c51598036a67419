import NIOCore

/// A datagram listener's peers by remote address, and the rule that bounds them. UDP source
/// addresses cost an attacker nothing (they can be spoofed), so every peer a datagram creates
/// must fit in fixed limits (`DatagramPeerLimits`):
/// - at most `maximumUnstarted` peers the application has not started yet;
/// - at most `maximumPeers` peers in all. When the table is full, a new address takes the slot of
///   the peer that has been idle longest (no datagram either way), but only one idle for at
///   least `idleBeforeEviction`; with none that idle, the new address's datagram is dropped, as
///   a full socket buffer drops one.
///
/// Activity is read lazily: a peer's transfer count (`activity`) is compared with the count seen
/// when it was last looked at, so nothing is recorded per datagram on the hot path.
struct DatagramPeerTable<Peer: AnyObject> {
    /// What to do with a datagram from an address that has no peer yet.
    enum Admission: Equatable {
        /// Make a peer for it.
        case admit
        /// Make a peer for it in the slot of this one, which must be told it was dropped.
        case admitEvicting(Peer)
        /// Drop the datagram: too many peers are not started yet.
        case tooManyUnstarted
        /// Drop the datagram: the table is full and no peer has been idle long enough.
        case full

        static func == (lhs: Admission, rhs: Admission) -> Bool {
            switch (lhs, rhs) {
            case (.admit, .admit), (.tooManyUnstarted, .tooManyUnstarted), (.full, .full): true
            case (.admitEvicting(let a), .admitEvicting(let b)): a === b
            default: false
            }
        }
    }

    private struct Entry {
        let peer: Peer
        /// Tells this peer from a later one at the same address (`remove(_:number:)`).
        let number: UInt64
        /// The peer's transfer count when last looked at, and when that was (or when it changed).
        var seenActivity: UInt64
        var seenAt: NIODeadline
    }

    let limits: DatagramPeerLimits
    /// Whether the application has started a peer.
    private let isStarted: (Peer) -> Bool
    /// A count that grows whenever a peer sends or receives (bytes or datagrams).
    private let activity: (Peer) -> UInt64
    private var entries: [SocketAddress: Entry] = [:]
    private var nextNumber: UInt64 = 0
    /// Addresses whose peers were unstarted when last looked at (a superset of the unstarted).
    private var maybeUnstarted: Set<SocketAddress> = []
    /// No peer can be evictable before this (nil: unknown; look).
    private var noEvictionBefore: NIODeadline?
    /// Peers found idle long enough by the last scan, with the activity count they had then;
    /// the oldest last.
    private var candidates: [(address: SocketAddress, activity: UInt64)] = []

    init(limits: DatagramPeerLimits = DatagramPeerLimits(), isStarted: @escaping (Peer) -> Bool, activity: @escaping (Peer) -> UInt64) {
        self.limits = limits
        self.isStarted = isStarted
        self.activity = activity
    }

    /// The number of peers.
    var count: Int { entries.count }
    /// Whether there are none.
    var isEmpty: Bool { entries.isEmpty }
    /// Every peer.
    var peers: [Peer] { entries.values.map(\.peer) }

    /// The peer for `remote`, if it has one.
    subscript(remote: SocketAddress) -> Peer? { entries[remote]?.peer }

    /// As the subscript, for the per-datagram lookup of a class that holds the table: `mutating`
    /// only so that the lookup runs on the table in place (through the subscript, the caller
    /// copied the whole table first, every closure and dictionary in it retained and released).
    mutating func lookUp(_ remote: SocketAddress) -> Peer? { entries[remote]?.peer }

    /// Decides whether a datagram from `remote` (which has no peer) may create one. On
    /// `.admitEvicting`, the evicted peer is already out of the table.
    mutating func admit(_ remote: SocketAddress, now: NIODeadline) -> Admission {
        maybeUnstarted = maybeUnstarted.filter { address in entries[address].map { !isStarted($0.peer) } ?? false }
        guard maybeUnstarted.count < limits.maximumUnstarted else { return .tooManyUnstarted }
        guard entries.count >= limits.maximumPeers else { return .admit }
        if let (address, peer) = nextEvictable(now: now) {
            entries[address] = nil
            maybeUnstarted.remove(address)
            return .admitEvicting(peer)
        }
        return .full
    }

    /// A number for the next peer, by which it is removed (taken before the peer is made, so
    /// that the peer's own release can carry it).
    mutating func takeNumber() -> UInt64 {
        nextNumber += 1
        return nextNumber
    }

    /// Records the new peer for `remote` (after `.admit` or `.admitEvicting`).
    mutating func insert(_ peer: Peer, number: UInt64, for remote: SocketAddress, now: NIODeadline) {
        entries[remote] = Entry(peer: peer, number: number, seenActivity: activity(peer), seenAt: now)
        maybeUnstarted.insert(remote)
    }

    /// Forgets `remote`'s peer if it is still peer `number` (it closed). An evicted peer that
    /// closes later must not take a newer peer at its address with it.
    mutating func remove(_ remote: SocketAddress, number: UInt64) {
        guard entries[remote]?.number == number else { return }
        entries[remote] = nil
        maybeUnstarted.remove(remote)
    }

    /// Forgets `peer`, wherever it is.
    mutating func remove(_ peer: Peer) {
        guard let address = entries.first(where: { $0.value.peer === peer })?.key else { return }
        entries[address] = nil
        maybeUnstarted.remove(address)
    }

    /// Forgets every peer and returns them.
    mutating func removeAll() -> [Peer] {
        let all = peers
        entries.removeAll()
        maybeUnstarted.removeAll()
        candidates.removeAll()
        noEvictionBefore = nil
        return all
    }

    /// The peer idle longest, if one has been idle at least `idleBeforeEviction`. Candidates come
    /// from one scan of the whole table (oldest first, each still idle when its turn comes), and
    /// a scan that finds none notes when the next could become evictable: under a flood of new
    /// addresses the table is scanned once per batch of evictions, not once per datagram.
    private mutating func nextEvictable(now: NIODeadline) -> (SocketAddress, Peer)? {
        while let (address, seen) = candidates.popLast() {
            guard let entry = entries[address], entry.seenActivity == seen, activity(entry.peer) == seen else { continue }
            return (address, entry.peer)
        }
        if let noEvictionBefore, now < noEvictionBefore { return nil }
        var idle: [(address: SocketAddress, at: NIODeadline, seen: UInt64)] = []
        var nextEvictable: NIODeadline?
        for (address, entry) in entries {
            let current = activity(entry.peer)
            var seenAt = entry.seenAt
            if current != entry.seenActivity {
                seenAt = now
                entries[address]?.seenActivity = current
                entries[address]?.seenAt = now
            }
            // Peers the application has not started are bounded on their own and not evicted.
            guard isStarted(entry.peer) else { continue }
            if now - seenAt >= limits.idleBeforeEviction {
                idle.append((address, seenAt, current))
            } else {
                let at = seenAt + limits.idleBeforeEviction
                if nextEvictable.map({ at < $0 }) ?? true { nextEvictable = at }
            }
        }
        noEvictionBefore = idle.isEmpty ? nextEvictable : nil
        // Newest first, so that popping from the end gives the oldest.
        candidates = idle.sorted { $0.at > $1.at }.map { ($0.address, $0.seen) }
        guard let address = candidates.popLast()?.address, let entry = entries[address] else { return nil }
        return (address, entry.peer)
    }
}
