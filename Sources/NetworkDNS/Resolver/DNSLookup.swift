/// A running address lookup started with a callback; cancel it when the connection no longer
/// needs the answer (no further events are delivered after `cancel()` returns... except one
/// that was already being delivered).
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
