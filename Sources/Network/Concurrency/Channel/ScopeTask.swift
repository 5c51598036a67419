import Synchronization

/// The task a channel is scoped to (the body of `withNetworkConnection`, a listener's child task
/// for one connection, a QUIC stream's): that task carries one cancellation handler for the
/// whole scope, which cancels the connection, so its sends and receives need none of their own.
/// A handler per wait costs a status record added and removed under the task's lock, and two
/// executor switches (`withTaskCancellationHandler` hops to its isolation and back), on every
/// receive that suspends. Any other task (one the scope started, an unstructured one, a
/// connection used outside any scope) still installs its own.
struct ScopeTask: ~Copyable, Sendable {
    /// The scope task's identity (its address, see `current`), 0 outside the scope.
    private let task = Atomic<UInt>(0)

    /// Whether the running task is the scope's.
    var isCurrent: Bool {
        let owner = task.load(ordering: .relaxed)
        return owner != 0 && owner == Self.current
    }

    /// Runs `body` as the scope of `core`'s channel in the running task: a cancellation of the
    /// task cancels the connection at once (as a wait would on cancellation), whatever the body
    /// is doing then.
    nonisolated(nonsending) func run<T>(
        cancelling core: ChannelCore, _ body: nonisolated(nonsending) () async throws -> T
    ) async throws -> T {
        let me = Self.current
        task.store(me, ordering: .relaxed)
        defer { _ = task.compareExchange(expected: me, desired: 0, ordering: .relaxed) }
        return try await withTaskCancellationHandler {
            try await body()
        } onCancel: {
            core.cancel()
        }
    }

    /// The running task's address, 0 outside a task. (`UnsafeCurrentTask` is one reference to
    /// the task; two tasks alive at the same time have different addresses, and the scope's task
    /// outlives the scope.)
    private static var current: UInt {
        withUnsafeCurrentTask { task in task.map { unsafeBitCast($0, to: UInt.self) } ?? 0 }
    }
}
