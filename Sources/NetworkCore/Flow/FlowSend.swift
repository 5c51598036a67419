import Foundation
import NIOCore

/// One send as the flow carries it from the caller to the socket.
package struct FlowSend: Sendable {
    // The flags sit in the byte after `data` and after the completions: 98 bytes instead of
    // 105, so an idle connection's mailbox array (a pending receive shares the operation's
    // size) is one malloc size class smaller.
    package var data: ByteBuffer?
    /// Ends the message (one datagram on UDP).
    package var isComplete: Bool
    /// Bytes still in the caller's `Data`. A datagram's stay there until the loop copies every
    /// such send of one hop into one buffer (`Flow.gatherDatagramBytes`), one allocation instead
    /// of one each; a stream send's are written from there directly or copied into a reused
    /// buffer before the loop sees them (`FlowMailbox.submitStreamSend`).
    package var uncopied: Data?
    /// Nil when nobody waits, or when the send already completed as it was taken.
    package var completion: Flow.SendCompletion?
    /// A datagram send's completion (the only kind a datagram send has), settled with the other
    /// datagrams of its flush (`DatagramOutbox`).
    package var datagramCompletion: (any FlowDatagramCompletion)?
    /// Ends the sending side once complete (a final context).
    package var closesWrite: Bool
    /// Its bytes count in the send budget until the loop writes them.
    package var counted = false

    package init(data: ByteBuffer?, isComplete: Bool, closesWrite: Bool, completion: Flow.SendCompletion? = nil) {
        self.data = data
        self.isComplete = isComplete
        self.closesWrite = closesWrite
        self.completion = completion
    }

    package var byteCount: Int { data?.readableBytes ?? uncopied?.count ?? 0 }

    /// Whether this is a send of one whole datagram that a sender may write to the socket from
    /// its own thread at the end of its batch (`FlowMailbox.endDatagramBatch`): it has its bytes, ends its message, closes
    /// nothing and cannot fail alone for its size (`Flow.largestDatagramThatCannotFailAlone`).
    var isDirectDatagram: Bool {
        guard isComplete, !closesWrite, let count = uncopied?.count ?? data?.readableBytes else { return false }
        return count <= Flow.largestDatagramThatCannotFailAlone
    }
}
