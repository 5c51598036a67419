import NetworkCore
import NetworkSync

/// What a ``ChannelCore`` knows of its connection's life: whether it started, its last state,
/// and the tasks waiting for `ready`, for the close or for the end. Apart from the core so that
/// the connection's state handler can hold it strongly: a handler holding the core weakly gave
/// the core a side table, which sends every retain and release of it (one per send and per
/// receive) down the runtime's slow path. Nothing here holds the core, so its `deinit` still
/// runs when its channel goes, and cancels the connection.
final class ChannelLifecycle: Sendable {
    private let shared = Lock(Shared())

    private struct Shared {
        var started = false
        var state: NWConnection.State = .setup
        /// Tasks waiting for `ready` (or a state after which it never comes).
        var readyWaiters: [ChannelContinuation<Void>] = []
        /// Tasks waiting for `cancelled` (`close()`).
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// Tasks waiting for the connection's end, `failed` or `cancelled` (`waitUntilEnded()`).
        var endWaiters: [CheckedContinuation<NWConnection.State, Never>] = []
        /// Where state changes go besides `state` (the channel's `onStateUpdate`).
        var stateObserver: (@Sendable (NWConnection.State) -> Void)?
        /// The data-transfer measurement `dataTransferReport()` started.
        var transferReport: NWConnection.PendingDataTransferReport?
    }

    /// Whether the connection was started.
    var started: Bool { shared.withLock { $0.started } }

    /// Records the start; false if the connection had started already.
    func markStarted() -> Bool {
        shared.withLock { shared in
            guard !shared.started else { return false }
            shared.started = true
            return true
        }
    }

    /// Sets (or clears) the observer of state changes.
    func observeStates(_ observer: (@Sendable (NWConnection.State) -> Void)?) {
        shared.withLock { $0.stateObserver = observer }
    }

    /// The measurement `start` makes, made once: later calls return the first.
    func transferReport(
        _ start: () -> NWConnection.PendingDataTransferReport
    ) -> NWConnection.PendingDataTransferReport {
        shared.withLock { shared in
            if let report = shared.transferReport { return report }
            let report = start()
            shared.transferReport = report
            return report
        }
    }

    /// The connection's state handler: records `state`, tells the observer, and resumes the
    /// tasks that waited for it.
    func stateChanged(_ state: NWConnection.State) {
        let (waiters, closeWaiters, endWaiters, observer) = shared.withLock { shared in
            shared.state = state
            var waiters: [ChannelContinuation<Void>] = []
            var closeWaiters: [CheckedContinuation<Void, Never>] = []
            var endWaiters: [CheckedContinuation<NWConnection.State, Never>] = []
            switch state {
            case .ready:
                swap(&waiters, &shared.readyWaiters)
            case .failed:
                swap(&waiters, &shared.readyWaiters)
                swap(&endWaiters, &shared.endWaiters)
            case .cancelled:
                swap(&waiters, &shared.readyWaiters)
                swap(&closeWaiters, &shared.closeWaiters)
                swap(&endWaiters, &shared.endWaiters)
            case .setup, .waiting, .preparing:
                break
            }
            return (waiters, closeWaiters, endWaiters, shared.stateObserver)
        }
        // The observer first: who waits for the close may then wait for its observers too.
        observer?(state)
        for waiter in waiters { Self.settle(waiter, with: state) }
        for waiter in closeWaiters { waiter.resume() }
        for waiter in endWaiters { waiter.resume(returning: state) }
    }

    /// Resumes `continuation` once the connection is ready (throws if it fails or is
    /// cancelled first); at once if it is past that already.
    func waitForReady(_ continuation: ChannelContinuation<Void>) {
        let settled = shared.withLock { shared -> NWConnection.State? in
            switch shared.state {
            case .ready, .failed, .cancelled:
                return shared.state
            case .setup, .waiting, .preparing:
                shared.readyWaiters.append(continuation)
                return nil
            }
        }
        if let settled { Self.settle(continuation, with: settled) }
    }

    /// Resumes `continuation` once the connection is cancelled; at once if it is.
    func waitForClose(_ continuation: CheckedContinuation<Void, Never>) {
        let closed = shared.withLock { shared -> Bool in
            if shared.state == .cancelled { return true }
            shared.closeWaiters.append(continuation)
            return false
        }
        if closed { continuation.resume() }
    }

    /// Resumes `continuation` with the state the connection ends in (`failed` or
    /// `cancelled`); at once if it has ended.
    func waitForEnd(_ continuation: CheckedContinuation<NWConnection.State, Never>) {
        let ended = shared.withLock { shared -> NWConnection.State? in
            switch shared.state {
            case .failed, .cancelled: return shared.state
            case .setup, .waiting, .preparing, .ready:
                shared.endWaiters.append(continuation)
                return nil
            }
        }
        if let ended { continuation.resume(returning: ended) }
    }

    private static func settle(_ continuation: ChannelContinuation<Void>, with state: NWConnection.State) {
        switch state {
        case .ready: continuation.resume()
        case .failed(let error): continuation.resume(throwing: error)
        default: continuation.resume(throwing: NWError.posix(.ECANCELED))
        }
    }
}
