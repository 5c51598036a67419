/// A running address lookup (AAAA and A) started with `DNSResolver.lookUpAddresses`. Cancel it
/// when the answers are no longer wanted: its queries stop (their sockets close, their timers
/// are cancelled) and events not yet delivered are dropped (one being delivered at that moment
/// may still arrive).
package final class DNSAddressLookup: Sendable {
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
