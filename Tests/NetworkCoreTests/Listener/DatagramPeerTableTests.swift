import NIOCore
import Testing

@testable import NetworkCore

/// The datagram listener's peer table as a value: its bounds and its eviction rule, on a fake
/// clock and fake peers.
@Suite("Core.DatagramPeerTable")
struct DatagramPeerTableTests {
    final class Peer {
        var started = true
        var activity: UInt64 = 0
    }

    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    static func address(_ port: Int) -> SocketAddress {
        try! SocketAddress(ipAddress: "127.0.0.1", port: port)
    }

    static func table(maximumPeers: Int = 3, maximumUnstarted: Int = 2) -> DatagramPeerTable<Peer> {
        var limits = DatagramPeerLimits()
        limits.maximumPeers = maximumPeers
        limits.maximumUnstarted = maximumUnstarted
        limits.idleBeforeEviction = .seconds(10)
        return DatagramPeerTable(limits: limits, isStarted: { $0.started }, activity: { $0.activity })
    }

    /// Admits and inserts a new peer at `port`; returns it and its number.
    @discardableResult
    static func add(_ table: inout DatagramPeerTable<Peer>, _ port: Int, at now: NIODeadline, started: Bool = true) -> (Peer, UInt64) {
        let peer = Peer()
        peer.started = started
        let number = table.takeNumber()
        table.insert(peer, number: number, for: address(port), now: now)
        return (peer, number)
    }

    @Test func admitsUntilFullThenDropsWhileEveryoneIsRecent() {
        var table = Self.table()
        for port in 1...3 {
            #expect(table.admit(Self.address(port), now: Self.start) == .admit)
            Self.add(&table, port, at: Self.start)
        }
        #expect(table.admit(Self.address(4), now: Self.start + .seconds(9)) == .full)
        #expect(table.count == 3)
    }

    @Test func evictsTheLongestIdleStartedPeerOnceIdleLongEnough() {
        var table = Self.table()
        let (first, _) = Self.add(&table, 1, at: Self.start)
        let (second, _) = Self.add(&table, 2, at: Self.start + .seconds(1))
        let (third, _) = Self.add(&table, 3, at: Self.start + .seconds(2))
        // The first peer talked meanwhile: it is not the longest idle any more.
        first.activity = 100
        #expect(table.admit(Self.address(4), now: Self.start + .seconds(5)) == .full)
        #expect(table.admit(Self.address(4), now: Self.start + .seconds(11)) == .admitEvicting(second))
        #expect(table[Self.address(2)] == nil)
        Self.add(&table, 4, at: Self.start + .seconds(11))
        #expect(table.admit(Self.address(5), now: Self.start + .seconds(12)) == .admitEvicting(third))
        Self.add(&table, 5, at: Self.start + .seconds(12))
        // The first peer was seen active at 5 s: evictable from 15 s on, not before.
        #expect(table.admit(Self.address(6), now: Self.start + .seconds(14)) == .full)
        #expect(table.admit(Self.address(6), now: Self.start + .seconds(15)) == .admitEvicting(first))
    }

    @Test func aCandidateThatTalkedSinceTheScanIsSkipped() {
        var table = Self.table()
        let (first, _) = Self.add(&table, 1, at: Self.start)
        let (second, _) = Self.add(&table, 2, at: Self.start)
        Self.add(&table, 3, at: Self.start + .seconds(20))
        #expect(table.admit(Self.address(4), now: Self.start + .seconds(11)) != .full)
        Self.add(&table, 4, at: Self.start + .seconds(11))
        // Whichever of the two idle peers is left as a candidate talks now, and is spared.
        let remaining = table[Self.address(1)] != nil ? first : second
        remaining.activity = 1
        #expect(table.admit(Self.address(5), now: Self.start + .seconds(12)) == .full)
    }

    @Test func unstartedPeersAreCapped() {
        var table = Self.table(maximumPeers: 10, maximumUnstarted: 2)
        let (a, _) = Self.add(&table, 1, at: Self.start, started: false)
        Self.add(&table, 2, at: Self.start, started: false)
        #expect(table.admit(Self.address(3), now: Self.start) == .tooManyUnstarted)
        a.started = true
        #expect(table.admit(Self.address(3), now: Self.start) == .admit)
    }

    @Test func unstartedPeersAreNeverEvicted() {
        var table = Self.table(maximumPeers: 2, maximumUnstarted: 5)
        Self.add(&table, 1, at: Self.start, started: false)
        let (_, number) = Self.add(&table, 2, at: Self.start, started: false)
        #expect(table.admit(Self.address(3), now: Self.start + .seconds(60)) == .full)
        table.remove(Self.address(2), number: number)
        #expect(table.admit(Self.address(3), now: Self.start + .seconds(60)) == .admit)
    }

    @Test func anEvictedPeersLateReleaseDoesNotRemoveItsSuccessor() {
        var table = Self.table(maximumPeers: 1)
        let (_, oldNumber) = Self.add(&table, 1, at: Self.start)
        #expect(table.admit(Self.address(2), now: Self.start + .seconds(10)) != .full)
        Self.add(&table, 2, at: Self.start + .seconds(10))
        // Address 1 comes back and gets a new peer; then the evicted one finally closes.
        #expect(table.admit(Self.address(1), now: Self.start + .seconds(20)) != .full)
        let (newer, _) = Self.add(&table, 1, at: Self.start + .seconds(20))
        table.remove(Self.address(1), number: oldNumber)
        #expect(table[Self.address(1)] === newer)
    }

    @Test func aFloodIsScannedOncePerBatchNotPerDatagram() {
        var limits = DatagramPeerLimits()
        limits.maximumPeers = 100
        limits.idleBeforeEviction = .seconds(10)
        // Counts how often the table asks for activity: one scan asks every peer once.
        var asked = 0
        var table = DatagramPeerTable<Peer>(limits: limits, isStarted: { _ in true }, activity: { _ in
            asked += 1
            return 0
        })
        for port in 1...100 { Self.add(&table, port, at: Self.start) }
        asked = 0
        // 1,000 new addresses while everyone is recent: one scan, then no more until 10 s.
        for port in 101...1_100 { _ = table.admit(Self.address(port), now: Self.start + .seconds(1)) }
        #expect(asked <= 100, "asked \(asked) times")
        // Later, 100 evictions in a row cost about one scan plus one check each.
        asked = 0
        for port in 101...200 {
            guard case .admitEvicting = table.admit(Self.address(port), now: Self.start + .seconds(11)) else {
                Issue.record("port \(port) not admitted")
                break
            }
            Self.add(&table, port, at: Self.start + .seconds(11))
        }
        #expect(asked <= 300, "asked \(asked) times for 100 evictions")
    }
}
