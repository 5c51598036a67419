/// A running address lookup started with a callback. Cancel it when the connection no longer
/// needs the answers: the queries stop and events not yet delivered are dropped (one that is
/// being delivered at that moment may still arrive).
package final class DNSLookup: Sendable {
    private let task: Task<Void, Never>

    init(task: Task<Void, Never>) {
        self.task = task
    }

    /// Stops the lookup's queries and suppresses its remaining events.
    package func cancel() {
        task.cancel()
    }

    /// Waits until both events were delivered (or the lookup was cancelled).
    package func wait() async {
        await task.value
    }
}
