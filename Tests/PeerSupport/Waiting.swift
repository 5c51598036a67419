import Dispatch
import Foundation
import NetworkSync

/// A wait that ran out of time. Its description says what was awaited and what was seen.
public struct BehaviourTimeout: Error, CustomStringConvertible {
    public let what: String
    public let seconds: Double
    public var description: String { "timed out after \(seconds) s waiting for \(what)" }
}

/// Runs `body`, failing with `BehaviourTimeout` if it has not finished after `seconds`.
/// `body` must honour task cancellation (sleeps, `Recorder.wait`, ...), so a timed-out body
/// really stops.
public func withTimeout<T: Sendable>(
    seconds: Double, _ what: String = "operation", _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            throw BehaviourTimeout(what: what, seconds: seconds)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw BehaviourTimeout(what: what, seconds: seconds) }
        return first
    }
}

/// Sleeps without throwing (a cancelled sleep just returns early).
public func pause(milliseconds: Int) async {
    try? await Task.sleep(nanoseconds: UInt64(milliseconds) * 1_000_000)
}

/// Records values produced by callbacks (on any queue or thread) and lets a test wait, with a
/// timeout, until the recorded values satisfy a condition. Waiters are resumed straight from
/// `append`, so waiting costs no polling delay.
public final class Recorder<T: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let predicate: @Sendable ([T]) -> Bool
        let continuation: CheckedContinuation<[T], any Error>
    }

    private struct State {
        var values: [T] = []
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private let state = Lock(State())

    public init() {}

    public func append(_ value: T) {
        let fire: [(CheckedContinuation<[T], any Error>, [T])] = state.withLock { state in
            state.values.append(value)
            var fire: [(CheckedContinuation<[T], any Error>, [T])] = []
            let values = state.values
            state.waiters.removeAll { waiter in
                guard waiter.predicate(values) else { return false }
                fire.append((waiter.continuation, values))
                return true
            }
            return fire
        }
        for (continuation, values) in fire { continuation.resume(returning: values) }
    }

    public var values: [T] { state.withLock { $0.values } }
    public var count: Int { state.withLock { $0.values.count } }
    public var last: T? { state.withLock { $0.values.last } }

    /// Waits until `predicate` holds for the recorded values and returns them.
    @discardableResult
    public func wait(
        _ what: String, timeout: Double = 10, until predicate: @escaping @Sendable ([T]) -> Bool
    ) async throws -> [T] {
        let values = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[T], any Error>) in
            let (immediate, id): ([T]?, Int) = state.withLock { state in
                if predicate(state.values) { return (state.values, -1) }
                let id = state.nextID
                state.nextID += 1
                state.waiters.append(Waiter(id: id, predicate: predicate, continuation: continuation))
                return (nil, id)
            }
            if let immediate {
                continuation.resume(returning: immediate)
                return
            }
            // Weak: a recorder nobody waits on any more (and the values it holds, possibly
            // large) must not live on until the timer fires.
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
                guard let self else { return }
                let expired: (CheckedContinuation<[T], any Error>?, [T]) = state.withLock { state in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return (nil, []) }
                    return (state.waiters.remove(at: index).continuation, state.values)
                }
                if let waiter = expired.0 {
                    waiter.resume(throwing: BehaviourTimeout(what: "\(what) (recorded: \(expired.1))", seconds: timeout))
                }
            }
        }
        // When `append` resumed a waiter that had suspended, the hand-over went through the
        // concurrency runtime, which ThreadSanitizer does not see (swiftlang/swift#57803): what
        // the appending thread wrote before `append` (a received message's context, say) would
        // look unordered with the waiter's reads. Taking the lock once more orders them.
        state.withLock { _ in }
        return values
    }

    /// Waits until at least `count` values were recorded and returns them all.
    @discardableResult
    public func wait(count: Int, _ what: String, timeout: Double = 10) async throws -> [T] {
        try await wait(what, timeout: timeout) { $0.count >= count }
    }
}
