import Dispatch
import NetworkCore

/// A classic object (connection, listener) that delivers its events on the queue given to its
/// `start(queue:)`, in the order they were produced. Events produced before `start` wait and go
/// out, in order, once it is called: nothing reaches user code before `start`. The object keeps
/// the `CallbackDelivery` under its own lock; the delivering itself is here, once for all.
protocol CallbackDelivering: AnyObject, Sendable {
    /// Runs `body` on the delivery state, under the object's lock. (Not generic over a result:
    /// a protocol requirement's generic cannot be specialized, and every event paid a runtime
    /// metadata lookup for it, measured at about 4 % of a framed-message client's time.)
    func withDelivery(_ body: (inout CallbackDelivery) -> Void)
    /// The batcher of the event loop the events are produced on, whose turns are batched; nil
    /// when events go to the queue one by one.
    var deliveryBatcher: DeliveryBatcher? { get }
}

extension CallbackDelivering {
    /// The queue, once started.
    var deliveryQueue: DispatchQueue? {
        var queue: DispatchQueue?
        withDelivery { queue = $0.queue }
        return queue
    }

    /// Sets the queue and flushes the backlog; returns false if it was already started.
    func startDelivery(queue: DispatchQueue) -> Bool {
        var started = false
        withDelivery { started = $0.start(queue: queue) }
        return started
    }

    /// Like `deliver`, but never held back by the loop's batcher: once this returns the work is on
    /// the queue (or in the backlog), so work handed over afterwards, from any thread, runs after
    /// it. Send completions need this: some complete on the sender's thread, the rest on the loop.
    /// State changes use it too, so that a send completing early on the sender's thread right
    /// after `ready` cannot overtake the `ready` update. What the loop gathered in its batcher
    /// before this call goes to the queue first: events leave in the order they were produced.
    func deliverInOrder(_ work: @escaping @Sendable () -> Void) {
        guard let queue = startedQueue(orHoldBack: work) else { return }
        deliveryBatcher?.flushIfOnLoop()
        queue.async(execute: work)
    }

    /// Hands `work` to the queue (through the loop's batcher, when there is one), or to the
    /// backlog before `start`.
    func deliver(_ work: @escaping @Sendable () -> Void) {
        guard let queue = startedQueue(orHoldBack: work) else { return }
        if let batcher = deliveryBatcher { batcher.enqueue(work, on: queue) } else { queue.async(execute: work) }
    }

    /// Hands `body` to the queue as one of `flow`'s callbacks, announced to it
    /// (`Flow.callbackQueued`): a callback of a read that ends before the next one has run
    /// leaves waking the loop to the last.
    func deliverCallback(of flow: Flow, _ body: @escaping @Sendable () -> Void) {
        flow.callbackQueued()
        deliver { flow.runCallback(queued: true, body) }
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
        var queue: DispatchQueue?
        withDelivery { queue = $0.startedQueue(orHoldBack: work) }
        return queue
    }
}
