import Dispatch

/// Where a classic object's events go: held back until `start(queue:)`, then to that queue.
/// Kept under the owning object's own lock (see `CallbackDelivering`, which has the delivering
/// methods): one word, and no object of its own, which every connection would pay for.
enum CallbackDelivery: Sendable {
    /// Not started: events produced so far, in order (the backlog exists only until the queue does).
    case waiting(backlog: [@Sendable () -> Void])
    /// Started: events go to this queue.
    case started(DispatchQueue)

    /// Not started, nothing held back.
    static var initial: CallbackDelivery { .waiting(backlog: []) }

    /// The queue, once started.
    var queue: DispatchQueue? {
        if case .started(let queue) = self { return queue }
        return nil
    }

    /// Sets the queue and hands it the backlog, in order; false if already started. Call it under
    /// the owner's lock: nobody may see the delivery started before the backlog is on the queue.
    mutating func start(queue: DispatchQueue) -> Bool {
        guard case .waiting(let backlog) = self else { return false }
        self = .started(queue)
        for work in backlog { queue.async(execute: work) }
        return true
    }

    /// The queue once started; before that, keeps `work` in the backlog and answers nil.
    mutating func startedQueue(orHoldBack work: @escaping @Sendable () -> Void) -> DispatchQueue? {
        switch self {
        case .started(let queue):
            return queue
        case .waiting(var backlog):
            // Taken out first, so appending does not copy the array.
            self = .waiting(backlog: [])
            backlog.append(work)
            self = .waiting(backlog: backlog)
            return nil
        }
    }
}
