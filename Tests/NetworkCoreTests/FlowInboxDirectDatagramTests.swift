import NetworkCore
import NetworkSystem
import Testing

/// When the inbox lets a sender write a batch of datagrams from its own thread, and what
/// becomes of the datagrams the socket did not take (`claimDirectDatagrams`,
/// `finishDirectDatagrams`). Operations are numbers: the odd ones stand for whole datagrams.
@Suite("Core.FlowInboxDirectDatagrams")
struct FlowInboxDirectDatagramTests {
    static func isDatagram(_ operation: Int) -> Bool { operation % 2 == 1 }

    /// An inbox with a socket (a duplicate of standard input: never written to) and direct
    /// writes armed.
    static func armedInbox() -> FlowInbox<Int> {
        var inbox = FlowInbox<Int>()
        inbox.directSocket = DirectSocket(duplicating: 0)
        inbox.armDirectWrites(true)
        return inbox
    }

    /// What `claimDirectDatagrams` took, if it claimed anything.
    static func claim(_ inbox: inout FlowInbox<Int>) -> [Int]? {
        inbox.claimDirectDatagrams().map(\.1)
    }

    /// `operations` queued in a batch, and what its end claimed.
    static func batch(_ operations: [Int], in inbox: inout FlowInbox<Int>) -> [Int]? {
        inbox.beginBatch()
        for operation in operations { _ = append(operation, to: &inbox) }
        inbox.leaveBatch()
        return claim(&inbox)
    }

    /// Queues `operation`, marked as a datagram if it is one.
    static func append(_ operation: Int, to inbox: inout FlowInbox<Int>) -> Bool {
        inbox.append(operation, directDatagram: isDatagram(operation))
    }

    @Test func theEndOfABatchClaimsItsDatagramsWithoutWakingTheLoop() {
        var inbox = Self.armedInbox()
        inbox.beginBatch()
        _ = Self.append(1, to: &inbox)
        _ = Self.append(3, to: &inbox)
        let duringBatch = Self.claim(&inbox)
        #expect(duringBatch == nil, "not while the batch is open")
        inbox.leaveBatch()
        let claimed = Self.claim(&inbox)
        #expect(claimed == [1, 3])
        let wakeForSend = Self.append(5, to: &inbox)
        #expect(wakeForSend)
        let taken = inbox.take()
        #expect(taken == [], "the loop takes nothing while the write is under way")
        let second = Self.claim(&inbox)
        #expect(second == nil, "one writer at a time")
        let wake = inbox.finishDirectDatagrams(bytes: 10, rest: [], failure: nil)
        #expect(wake, "the writer wakes the loop again for what came meanwhile")
        #expect(inbox.directlyWrittenBytes == 10)
        let later = inbox.take()
        #expect(later == [5])
    }

    @Test func aBatchOfOneIsClaimedAndDirectWritesGoOn() {
        var inbox = Self.armedInbox()
        let claimed = Self.batch([7], in: &inbox)
        #expect(claimed == [7])
        let wake = inbox.finishDirectDatagrams(bytes: 1, rest: [], failure: nil)
        #expect(!wake)
        #expect(inbox.directWritesArmed, "all went out: direct writes go on")
    }

    @Test func anythingButWholeDatagramsGoesThroughTheLoop() {
        var inbox = Self.armedInbox()
        let batch = Self.batch([1, 2], in: &inbox)
        #expect(batch == nil)
        let wake = inbox.wakeIfNeeded()
        #expect(wake)
        let taken = inbox.take()
        #expect(taken == [1, 2])
    }

    @Test func nothingIsClaimedUnarmedOrWithoutASocket() {
        var unarmed = FlowInbox<Int>()
        unarmed.directSocket = DirectSocket(duplicating: 0)
        let fromUnarmed = Self.batch([1], in: &unarmed)
        #expect(fromUnarmed == nil)
        var withoutSocket = FlowInbox<Int>()
        withoutSocket.armDirectWrites(true)
        let fromSocketless = Self.batch([1], in: &withoutSocket)
        #expect(fromSocketless == nil)
    }

    @Test func theRestOfAPartialWriteGoesFirstAndStopsDirectWrites() {
        var inbox = Self.armedInbox()
        let claimed = Self.batch([1], in: &inbox)
        #expect(claimed == [1])
        _ = Self.append(9, to: &inbox)
        _ = inbox.take()
        let wake = inbox.finishDirectDatagrams(bytes: 0, rest: [3, 5], failure: nil)
        #expect(wake)
        #expect(!inbox.directWritesArmed, "the loop writes the rest first")
        let next = Self.claim(&inbox)
        #expect(next == nil)
        let taken = inbox.take()
        #expect(taken == [3, 5, 9])
    }

    @Test func aFailureGoesAheadOfTheRest() {
        var inbox = Self.armedInbox()
        let claimed = Self.batch([1], in: &inbox)
        #expect(claimed == [1])
        let wake = inbox.finishDirectDatagrams(bytes: 0, rest: [1], failure: -1)
        #expect(wake)
        let taken = inbox.take()
        #expect(taken == [-1, 1])
    }
}
