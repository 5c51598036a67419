import Dispatch
import NetworkSync
import Testing

@testable import Network

/// `CallbackDelivery`, the value a connection or listener keeps under its lock: the backlog
/// before `start`, the queue after.
@Suite("Bridging.CallbackDelivery")
struct CallbackDeliveryTests {
    @Test("before start work is held back, in order, and no queue is known")
    func holdsBackBeforeStart() {
        var delivery = CallbackDelivery.initial
        let ran = Lock<[Int]>([])
        #expect(delivery.queue == nil)
        for index in 0..<3 {
            let queue = delivery.startedQueue(orHoldBack: { ran.withLock { $0.append(index) } })
            #expect(queue == nil)
        }
        guard case .waiting(let backlog) = delivery else {
            Issue.record("started without start")
            return
        }
        #expect(backlog.count == 3)
        for work in backlog { work() }
        #expect(ran.withLock { $0 } == [0, 1, 2])
    }

    @Test("start hands the backlog to the queue in order, once; afterwards work is not held back")
    func startFlushesBacklogOnce() {
        var delivery = CallbackDelivery.initial
        let ran = Lock<[Int]>([])
        for index in 0..<3 {
            _ = delivery.startedQueue(orHoldBack: { ran.withLock { $0.append(index) } })
        }
        let queue = DispatchQueue(label: "CallbackDeliveryTests")
        let started = delivery.start(queue: queue)
        #expect(started)
        #expect(delivery.queue === queue)
        let startedAgain = delivery.start(queue: DispatchQueue(label: "CallbackDeliveryTests.other"))
        #expect(!startedAgain)
        #expect(delivery.queue === queue)
        let answered = delivery.startedQueue(orHoldBack: { ran.withLock { $0.append(99) } })
        #expect(answered === queue)
        queue.sync {}
        // The work handed over after start was not kept: only the backlog ran.
        #expect(ran.withLock { $0 } == [0, 1, 2])
    }
}
