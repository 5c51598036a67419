import Dispatch
import NIOCore
import NetworkSync

/// Gathers the callbacks one event loop produces during one turn of the loop and hands them to
/// each target queue in a single `DispatchQueue.async`, in order. Waking a dispatch worker costs
/// more than the callbacks themselves; with many connections (or a batch of sends) completing in
/// one turn this replaces many wake-ups by one.
package final class DeliveryBatcher: @unchecked Sendable {
    /// One callback for one queue. (A struct, not a tuple: a closure stored in an array of
    /// tuples is reabstracted, one allocation per callback.)
    private struct Delivery: Sendable {
        let queue: DispatchQueue
        let work: @Sendable () -> Void
    }

    private let eventLoop: EventLoop
    // Touched on `eventLoop` only.
    private var pending: [Delivery] = []
    private var flushScheduled = false
    private var spare: [Delivery] = []

    private init(eventLoop: EventLoop) {
        self.eventLoop = eventLoop
    }

    private static let registry = Lock<[ObjectIdentifier: DeliveryBatcher]>([:])

    /// The batcher of `eventLoop` (one per loop, for the life of the process).
    package static func forEventLoop(_ eventLoop: EventLoop) -> DeliveryBatcher {
        registry.withLock { batchers in
            let key = ObjectIdentifier(eventLoop as AnyObject)
            if let existing = batchers[key] { return existing }
            let batcher = DeliveryBatcher(eventLoop: eventLoop)
            batchers[key] = batcher
            return batcher
        }
    }

    /// Queues `work` for `queue`. Off the loop (rare: listener children on another loop) it
    /// goes straight to the queue.
    package func enqueue(_ work: @escaping @Sendable () -> Void, on queue: DispatchQueue) {
        guard eventLoop.inEventLoop else {
            queue.async(execute: work)
            return
        }
        pending.append(Delivery(queue: queue, work: work))
        if !flushScheduled {
            flushScheduled = true
            // Runs after the I/O of this loop turn, so everything it produced goes together.
            eventLoop.execute { self.flush() }
        }
    }

    /// Hands everything gathered so far to its queues now, when called on the loop, so that work
    /// given straight to a queue afterwards cannot overtake it. (The flush already scheduled for
    /// this turn then finds nothing, or only what came later.)
    package func flushIfOnLoop() {
        guard eventLoop.inEventLoop, !pending.isEmpty else { return }
        flush()
        // `flush` cleared the flag, but its scheduled run is still coming: keep the flag set so
        // no second run is scheduled this turn.
        flushScheduled = true
    }

    private func flush() {
        flushScheduled = false
        var batch = spare
        swap(&batch, &pending)
        defer {
            batch.removeAll(keepingCapacity: true)
            spare = batch
        }
        var start = 0
        while start < batch.count {
            let queue = batch[start].queue
            var end = start + 1
            while end < batch.count && batch[end].queue === queue { end += 1 }
            if end - start == 1 {
                queue.async(execute: batch[start].work)
            } else {
                // The usual turn is one run for one queue: then the array itself goes, not a
                // copy (which retains every callback once more); the spare kept for the next
                // turn is then a fresh one of the same capacity.
                let deliveries = end - start == batch.count ? batch : Array(batch[start..<end])
                queue.async { for delivery in deliveries { delivery.work() } }
            }
            start = end
        }
    }
}
