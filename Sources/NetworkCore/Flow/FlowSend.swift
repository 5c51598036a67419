import NIOCore

/// One send as the flow carries it from the caller to the socket.
package struct FlowSend: Sendable {
    package var data: ByteBuffer?
    /// Ends the message (one datagram on UDP).
    package var isComplete: Bool
    /// Ends the sending side once complete (a final context).
    package var closesWrite: Bool
    /// Nil when nobody waits, or when the send already completed as it was taken.
    package var completion: Flow.SendCompletion?
    /// Its bytes count in the send budget until the loop writes them.
    package var counted = false

    package init(data: ByteBuffer?, isComplete: Bool, closesWrite: Bool, completion: Flow.SendCompletion? = nil) {
        self.data = data
        self.isComplete = isComplete
        self.closesWrite = closesWrite
        self.completion = completion
    }

    package var byteCount: Int { data?.readableBytes ?? 0 }
}
