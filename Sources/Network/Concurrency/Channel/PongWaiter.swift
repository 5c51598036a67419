import NetworkCore
import NetworkSync

/// Waits for the pong of one WebSocket ping: the engine reports it (or the connection's end)
/// once, possibly before anyone waits.
final class PongWaiter: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Void, any Error>)
        case done(FlowError?)
    }

    private let state = Lock(State.pending)

    /// Called once by the engine, on the connection's loop.
    func arrived(_ error: FlowError?) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            defer { state = .done(error) }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        guard let continuation else { return }
        if let error { continuation.resume(throwing: NWError(error)) } else { continuation.resume() }
    }

    /// Returns when the pong came; a cancelled task cancels `core`'s connection, which ends the
    /// wait.
    func wait(cancelling core: ChannelCore) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let done = state.withLock { state -> FlowError?? in
                    if case .done(let error) = state { return .some(error) }
                    state = .waiting(continuation)
                    return .none
                }
                guard let done else { return }
                if let error = done { continuation.resume(throwing: NWError(error)) } else { continuation.resume() }
            }
        } onCancel: {
            core.cancel()
        }
    }
}
