import Foundation
import Synchronization

/// Blocking work (a raw socket's `accept` or `recv`, a child process's wait) running on a
/// thread of its own, awaited like a task.
///
/// Not `Task.detached` and not `DispatchQueue.global()`: on Linux both run on the same few
/// threads as every test's tasks (as many as there are CPUs, two on CI), so two tests blocked in
/// a socket wait there stall every other test of a parallel run; one such stall measured 8 s and
/// pushed unrelated wall-clock bounds over.
public final class ThreadTask<Success: Sendable>: Sendable {
    private enum State {
        case running
        case waiting(CheckedContinuation<Success, any Error>)
        case finished(Result<Success, any Error>)
    }

    private let state = Mutex(State.running)

    /// Starts `body` on a new thread at once.
    public init(_ body: @escaping @Sendable () throws -> Success) {
        let thread = Thread { [self] in
            let result = Result { try body() }
            let waiting: CheckedContinuation<Success, any Error>? = state.withLock { state in
                defer { state = .finished(result) }
                if case .waiting(let continuation) = state { return continuation }
                return nil
            }
            waiting?.resume(with: result)
        }
        thread.start()
    }

    /// What `body` returned or threw, once it has.
    public var value: Success {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let finished: Result<Success, any Error>? = state.withLock { state in
                    if case .finished(let result) = state { return result }
                    state = .waiting(continuation)
                    return nil
                }
                if let finished { continuation.resume(with: finished) }
            }
        }
    }
}

/// Runs blocking work on a thread of its own (see `ThreadTask`) and waits for it. Every blocking
/// call the tests make has its own timeout, so this always returns.
public func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await ThreadTask(body).value
}
