import Foundation

/// What one receive completes with, in the `Network` module's terms (see `ReceiveOutcome`).
package enum DataReceiveOutcome: Sendable {
    /// Bytes (nil when there are none, for example at end of stream); `isComplete` means the
    /// message is complete (datagrams) or the stream has ended; `isFinal` marks end of stream.
    /// `message` is the framer metadata delivered with the message, if any.
    case data(Data?, isComplete: Bool, isFinal: Bool, message: (any AnyObject & Sendable)? = nil)
    case failure(FlowError)
}
