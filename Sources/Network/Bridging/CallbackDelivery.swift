import Dispatch
import NetworkCore
import Synchronization

/// Delivers a classic object's events on the queue given to `start(queue:)`, in the order they
/// were produced. Events produced before `start` wait and go out, in order, once it is called:
/// nothing reaches user code before `start`.
final class CallbackDelivery: Sendable {
    private struct State {
        var queue: DispatchQueue?
        var backlog: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    private let batcher: DeliveryBatcher?

    /// `batcher`: the one of the event loop the events are produced on, whose turns are batched.
    init(batcher: DeliveryBatcher? = nil) {
        self.batcher = batcher
    }

    /// The queue, once started.
    var queue: DispatchQueue? { state.withLock { $0.queue } }

    /// Sets the queue and flushes the backlog; returns false if it was already started.
    func start(queue: DispatchQueue) -> Bool {
        state.withLock { state in
            guard state.queue == nil else { return false }
            state.queue = queue
            for work in state.backlog { queue.async(execute: work) }
            state.backlog = []
            return true
        }
    }

    /// Like `deliver`, but never held back by the loop's batcher: once this returns the work is on
    /// the queue (or in the backlog), so work handed over afterwards, from any thread, runs after
    /// it. Send completions need this: some complete on the sender's thread, the rest on the loop.
    /// State changes use it too, so that a send completing early on the sender's thread right
    /// after `ready` cannot overtake the `ready` update. What the loop gathered in its batcher
    /// before this call goes to the queue first: events leave in the order they were produced.
    func deliverInOrder(_ work: @escaping @Sendable () -> Void) {
        state.withLock { state in
            if let queue = state.queue {
                batcher?.flushIfOnLoop()
                queue.async(execute: work)
            } else {
                state.backlog.append(work)
            }
        }
    }

    func deliver(_ work: @escaping @Sendable () -> Void) {
        state.withLock { state in
            if let queue = state.queue {
                // Enqueued under the lock so concurrent producers cannot reorder.
                if let batcher { batcher.enqueue(work, on: queue) } else { queue.async(execute: work) }
            } else {
                state.backlog.append(work)
            }
        }
    }
}
