#if canImport(Glibc)
import Glibc
#endif
import NetworkCore
import NetworkSync

/// Waits for one outcome the engine reports once, possibly before anyone waits: a stream send
/// taken (most often at once, on the sending thread), or a WebSocket ping's pong. A task that
/// finds the outcome already there does not suspend.
final class OutcomeWaiter: Sendable {
    private enum State {
        case pending
        case waiting(ChannelContinuation<Void>)
        case done(FlowError?)
    }

    private let state = Lock(State.pending)

    /// Called by the engine, on any thread, and by a cancelled wait; the first outcome counts.
    func arrived(_ error: FlowError?) {
        let continuation = state.withLock { state -> ChannelContinuation<Void>? in
            switch state {
            case .done: return nil
            case .pending:
                state = .done(error)
                return nil
            case .waiting(let continuation):
                state = .done(error)
                return continuation
            }
        }
        guard let continuation else { return }
        if let error { continuation.resume(throwing: NWError(error)) } else { continuation.resume() }
    }

    /// Returns when the outcome came, or throws its error. A task cancelled while it waits cancels
    /// `core`'s connection, stops waiting at once, and sees `CancellationError`.
    nonisolated(nonsending) func wait(cancelling core: ChannelCore) async throws {
        // (Suspending costs a continuation, a cancellation handler and a trip through the
        // executor's queue. A cancelled task still takes the long way: it cancels the connection.)
        if !Task.isCancelled, let done = outcome {
            if let error = done { throw NWError(error) }
            return
        }
        try await core.cancellable({ (continuation: ChannelContinuation<Void>) in
            let done = state.withLock { state -> FlowError?? in
                if case .done(let error) = state { return .some(error) }
                state = .waiting(continuation)
                return .none
            }
            guard let done else { return }
            if let error = done { continuation.resume(throwing: NWError(error)) } else { continuation.resume() }
        }, alsoOnCancel: {
            // (The engine may take long to settle a send that waits for the socket: a cancelled
            // connection still lets what was handed over drain, for up to 10 s.)
            self.arrived(.posix(ECANCELED))
        })
    }

    /// The outcome, if it came: nil while pending, `.some(nil)` for success.
    private var outcome: FlowError?? {
        state.withLock { state in
            if case .done(let error) = state { return .some(error) }
            return .none
        }
    }
}
