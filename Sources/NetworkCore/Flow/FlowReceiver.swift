import Foundation
import NIOCore
import NIOFoundationCompat

/// Who waits for one receive: the caller's completion, kept as given. (Not wrapped in a closure
/// that converts the bytes, and a struct rather than a bare closure in the generic
/// `ReceiveQueue`, which would need a reabstraction thunk: an idle connection's pending receive
/// then costs one allocation, the caller's own, instead of three.)
package struct FlowReceiver: Sendable {
    private let completion: @Sendable (DataReceiveOutcome) -> Void

    /// `completion` takes the bytes as `Data` (large buffers without a copy: the `Data` keeps
    /// NIO's storage).
    package init(_ completion: @escaping @Sendable (DataReceiveOutcome) -> Void) {
        self.completion = completion
    }

    /// Hands `outcome` to the completion.
    package func complete(_ outcome: ReceiveOutcome) {
        completion(DataReceiveOutcome(outcome))
    }
}
