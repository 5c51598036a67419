import Foundation
import NIOCore
import NIOFoundationCompat

/// Who waits for one receive: the caller's completion, kept as given, or a suspended task's
/// continuation. (Not wrapped in a closure that converts the bytes, and a struct rather than a
/// bare closure in the generic `ReceiveQueue`, which would need a reabstraction thunk: an idle
/// connection's pending receive then costs one allocation, the caller's own, instead of three;
/// a task's costs none, where a closure around its continuation cost one per receive.)
package struct FlowReceiver: Sendable {
    private enum Waiter: Sendable {
        case completion(@Sendable (DataReceiveOutcome) -> Void)
        case task(UnsafeContinuation<DataReceiveOutcome, Never>)
    }

    private let waiter: Waiter

    /// `completion` takes the bytes as `Data` (large buffers without a copy: the `Data` keeps
    /// NIO's storage).
    package init(_ completion: @escaping @Sendable (DataReceiveOutcome) -> Void) {
        waiter = .completion(completion)
    }

    /// The task suspended on `continuation` resumes with the outcome (the flow completes every
    /// receive exactly once: with its bytes, or with the error that ends the flow).
    package init(resuming continuation: UnsafeContinuation<DataReceiveOutcome, Never>) {
        waiter = .task(continuation)
    }

    /// Hands `outcome` to the completion, or resumes the task with it.
    package func complete(_ outcome: ReceiveOutcome) {
        switch waiter {
        case .completion(let completion): completion(DataReceiveOutcome(outcome))
        case .task(let continuation): continuation.resume(returning: DataReceiveOutcome(outcome))
        }
    }
}
