import Dispatch
import NetworkCore
import Synchronization

/// Delivers a classic object's events on the queue given to `start(queue:)`, in the order they
/// were produced. Events produced before `start` wait and go out, in order, once it is called:
/// nothing reaches user code before `start`.
final class CallbackDelivery: Sendable {
    /// One word (every connection has a delivery): the backlog exists only until the queue does.
    private enum State {
        case waiting(backlog: [@Sendable () -> Void])
        case started(DispatchQueue)

        /// Adds `work` to the backlog (taking the array out first, so appending does not copy it).
        mutating func holdBack(_ work: @escaping @Sendable () -> Void) {
            guard case .waiting(var backlog) = self else { return }
            self = .waiting(backlog: [])
            backlog.append(work)
            self = .waiting(backlog: backlog)
        }
    }

    private let state = Mutex(State.waiting(backlog: []))
    private let batcher: DeliveryBatcher?

    /// `batcher`: the one of the event loop the events are produced on, whose turns are batched.
    init(batcher: DeliveryBatcher? = nil) {
        self.batcher = batcher
    }

    /// The queue, once started.
    var queue: DispatchQueue? {
        state.withLock { state in
            if case .started(let queue) = state { return queue }
            return nil
        }
    }

    /// Sets the queue and flushes the backlog; returns false if it was already started.
    func start(queue: DispatchQueue) -> Bool {
        state.withLock { state in
            guard case .waiting(let backlog) = state else { return false }
            state = .started(queue)
            for work in backlog { queue.async(execute: work) }
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
        guard let queue = startedQueue(orHoldBack: work) else { return }
        batcher?.flushIfOnLoop()
        queue.async(execute: work)
    }

    func deliver(_ work: @escaping @Sendable () -> Void) {
        guard let queue = startedQueue(orHoldBack: work) else { return }
        if let batcher { batcher.enqueue(work, on: queue) } else { queue.async(execute: work) }
    }

    /// The queue once started; before that, keeps `work` in the backlog and answers nil.
    ///
    /// The hand-over to the queue happens after the lock is released: `queue.async` can wake a
    /// worker thread, which on a shared CPU preempts this thread, and a lock held meanwhile
    /// makes every other producer (and `queue`'s readers) spin for it (measured: 2.4 % of a TLS
    /// handshake client's time in `NWConnection.cancel` waiting so). Order is kept without it:
    /// `start` has put the whole backlog on the queue before anyone can see it started, and of
    /// two producers one of which returned before the other called, the first one's work is
    /// already on the queue; producers racing each other have no order to keep.
    private func startedQueue(orHoldBack work: @escaping @Sendable () -> Void) -> DispatchQueue? {
        state.withLock { state in
            switch state {
            case .started(let queue):
                return queue
            case .waiting:
                state.holdBack(work)
                return nil
            }
        }
    }
}
