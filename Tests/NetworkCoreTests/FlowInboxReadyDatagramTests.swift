import DequeModule
import NIOCore
import NetworkCore
import Testing

/// The datagrams a flow leaves for receives on other threads (`FlowInbox.readyDatagrams`), on
/// the value types: who may take one, in what order, and when reading resumes.
@Suite("Core.FlowInbox.ReadyDatagrams")
struct FlowInboxReadyDatagramTests {
    static func datagram(_ text: String) -> QueuedMessage {
        QueuedMessage(bytes: ByteBuffer(string: text), metadata: nil)
    }

    /// In these tests, negative operations are receives.
    static func isReceive(_ operation: Int) -> Bool { operation < 0 }

    static func text(_ message: QueuedMessage?) -> String? {
        message.map { String(buffer: $0.bytes) }
    }

    @Test func readyDatagramsAreTakenOldestFirstAndCountTheirBytes() {
        var inbox = FlowInbox<Int>()
        inbox.publishReady([Self.datagram("one"), Self.datagram("two")])
        inbox.publishReady([Self.datagram("three")])
        #expect(inbox.readyBytes == 11)
        let first = inbox.takeReady(maximum: 100, isReceive: Self.isReceive)
        #expect(Self.text(first?.datagram) == "one")
        let second = inbox.takeReady(maximum: 100, isReceive: Self.isReceive)
        #expect(Self.text(second?.datagram) == "two")
        let third = inbox.takeReady(maximum: 100, isReceive: Self.isReceive)
        #expect(Self.text(third?.datagram) == "three")
        let none = inbox.takeReady(maximum: 100, isReceive: Self.isReceive)
        #expect(none == nil)
        #expect(inbox.readyBytes == 0)
    }

    @Test func aReceiveQueuedForTheLoopComesFirst() {
        var inbox = FlowInbox<Int>()
        inbox.publishReady([Self.datagram("one"), Self.datagram("two")])
        _ = inbox.append(7)
        let pastASend = inbox.takeReady(maximum: 100, isReceive: Self.isReceive)
        #expect(Self.text(pastASend?.datagram) == "one", "a queued send is no reason to wait")
        let none = inbox.reclaimReadyForQueuedReceives(isReceive: Self.isReceive)
        #expect(none.isEmpty)
        _ = inbox.append(-1, lazy: true)
        let overtaking = inbox.takeReady(maximum: 100, isReceive: Self.isReceive)
        #expect(overtaking == nil, "a later receive may not overtake the queued one")
        // The loop takes the receive and the datagrams together (`FlowMailbox.take`).
        let reclaimed = inbox.reclaimReadyForQueuedReceives(isReceive: Self.isReceive)
        #expect(inbox.take() == [7, -1])
        #expect(reclaimed.map { String(buffer: $0.bytes) } == ["two"])
        #expect(inbox.readyBytes == 0)
    }

    @Test func aDatagramLongerThanTheReceiveTakesGoesThroughTheLoop() {
        var inbox = FlowInbox<Int>()
        inbox.publishReady([Self.datagram("twelve bytes")])
        let tooShort = inbox.takeReady(maximum: 11, isReceive: Self.isReceive)
        #expect(tooShort == nil)
        let whole = inbox.takeReady(maximum: 12, isReceive: Self.isReceive)
        #expect(Self.text(whole?.datagram) == "twelve bytes")
    }

    @Test func readingThatStoppedForReadyDatagramsResumesOnceHalfAreTaken() {
        var inbox = FlowInbox<Int>()
        let limit = Flow.datagramHighWaterCount
        inbox.publishReady(Deque((0..<(limit - 10)).map { Self.datagram("\($0)") }))
        let under = inbox.readyRoom(count: 5, bytes: 0)
        #expect(under, "under the mark with the loop's own")
        let at = inbox.readyRoom(count: 10, bytes: 0)
        #expect(!at, "at the mark: the loop stops reading")
        var resumedAt: Int?
        for taken in 1...(limit - 10) {
            guard let (_, resume) = inbox.takeReady(maximum: 100, isReceive: Self.isReceive) else { break }
            if resume {
                resumedAt = taken
                break
            }
        }
        #expect(resumedAt == limit - 10 - limit / 2, "the receive that leaves half the mark resumes reading")
        // Once only.
        let next = inbox.takeReady(maximum: 100, isReceive: Self.isReceive)
        #expect(next?.resumeReading == false)
    }

    @Test func theQueueHandsOverItsDatagramsOnlyWhenNoReceiveWaitsAndTakesThemBackInFront() {
        var queue = ReceiveQueue<Int>(mode: .datagram)
        _ = queue.append(ByteBuffer(string: "a"))
        _ = queue.append(ByteBuffer(string: "b"))
        let taken = queue.takeBufferedDatagrams()
        #expect(taken.map { String(buffer: $0.bytes) } == ["a", "b"])
        #expect(queue.bufferedBytes == 0 && queue.bufferedDatagramCount == 0)
        _ = queue.append(ByteBuffer(string: "c"))
        // The older ones go back in front of "c", and serve the receives in order.
        let completed = queue.prependDatagrams(taken[1...])
        #expect(completed.isEmpty)
        #expect(queue.bufferedBytes == 2)
        var order: [String] = []
        for token in 0..<2 {
            for (_, outcome) in queue.enqueue(minimum: 1, maximum: 10, token: token) {
                if case .data(let bytes?, _, _, _) = outcome { order.append(String(buffer: bytes)) }
            }
        }
        #expect(order == ["b", "c"])
        // A receive waiting has the next datagram: nothing is handed over ahead of it.
        _ = queue.enqueue(minimum: 1, maximum: 10, token: 9)
        let none = queue.takeBufferedDatagrams()
        #expect(none.isEmpty)
        let served = queue.append(ByteBuffer(string: "d"))
        #expect(Array(served).count == 1)
    }
}

extension FlowInboxReadyDatagramTests {
    @Test func afterACancelReceivesGoToTheLoop() {
        var inbox = FlowInbox<Int>()
        inbox.publishReady([Self.datagram("one")])
        inbox.budget.close()
        let taken = inbox.takeReady(maximum: 100, isReceive: Self.isReceive)
        #expect(taken == nil, "the loop answers a receive after a cancel (ECANCELED)")
    }
}
