import Foundation
import NIOCore
import NIOFoundationCompat

/// Who waits for one receive, and in which form it takes the bytes. The facade's completion is
/// kept as given rather than wrapped in a converting closure: an idle connection's pending
/// receive then costs one allocation (the caller's completion) instead of three.
package enum FlowReceiver: Sendable {
    /// Takes NIO buffers.
    case buffers(Flow.ReceiveCompletion)
    /// Takes `Data` (large buffers without a copy: the `Data` keeps NIO's storage).
    case data(@Sendable (DataReceiveOutcome) -> Void)

    /// Hands `outcome` to the waiting completion, converted to the form it takes.
    func complete(_ outcome: ReceiveOutcome) {
        switch self {
        case .buffers(let completion):
            completion(outcome)
        case .data(let completion):
            switch outcome {
            case .data(let buffer, let isComplete, let isFinal):
                let data = buffer.map { Data(buffer: $0, byteTransferStrategy: .automatic) }
                completion(.data(data, isComplete: isComplete, isFinal: isFinal))
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }
}
