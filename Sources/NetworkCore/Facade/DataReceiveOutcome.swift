import Foundation
import NIOCore
import NIOFoundationCompat

/// What one receive completes with, in the `Network` module's terms (see `ReceiveOutcome`).
package enum DataReceiveOutcome: Sendable {
    /// Bytes (nil when there are none, for example at end of stream); `isComplete` means the
    /// message is complete (datagrams) or the stream has ended; `isFinal` marks end of stream.
    /// `message` is the framer metadata delivered with the message, if any.
    case data(Data?, isComplete: Bool, isFinal: Bool, message: (any AnyObject & Sendable)? = nil)
    case failure(FlowError)
}

extension DataReceiveOutcome {
    /// `outcome` with its bytes as `Data` (large buffers without a copy: the `Data` keeps
    /// NIO's storage).
    init(_ outcome: ReceiveOutcome) {
        switch outcome {
        case .data(let buffer, let isComplete, let isFinal, let message):
            let data = buffer.map { Data(buffer: $0, byteTransferStrategy: .automatic) }
            self = .data(data, isComplete: isComplete, isFinal: isFinal, message: message)
        case .failure(let error):
            self = .failure(error)
        }
    }
}
