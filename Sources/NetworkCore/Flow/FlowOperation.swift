/// What another thread asks of a flow; waits in its mailbox until the event loop runs it.
enum FlowOperation: Sendable {
    case send(FlowSend)
    case receive(minimum: Int, maximum: Int, receiver: FlowReceiver)
    case other(@Sendable () -> Void)
    /// A write from a sender's thread found the socket failed (a reset, say). The system call
    /// took the socket's pending error with it, so NIO may never see it: the loop fails the flow
    /// with it, before the send that met it is run again.
    case directWriteFailed(Int32)
}

extension FlowOperation {
    var isReceive: Bool {
        if case .receive = self { return true }
        return false
    }

    /// The size of a send whose bytes are still in the caller's `Data`; nil for anything else.
    var uncopiedByteCount: Int? {
        guard case .send(let send) = self else { return nil }
        return send.uncopiedCount
    }

    /// Calls `body` with those bytes, if there are any.
    func withUncopiedBytes(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard case .send(let send) = self, let bytes = send.uncopied else { return }
        bytes.withUnsafeBytes(body)
    }
}
