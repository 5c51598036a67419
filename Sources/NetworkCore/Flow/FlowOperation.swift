/// What another thread asks of a flow; waits in its mailbox until the event loop runs it.
enum FlowOperation: Sendable {
    case send(FlowSend)
    case receive(minimum: Int, maximum: Int, receiver: FlowReceiver)
    case other(@Sendable () -> Void)
}

extension FlowOperation {
    /// The size of a send whose bytes are still in the caller's `Data`; nil for anything else.
    var uncopiedByteCount: Int? {
        guard case .send(let send) = self else { return nil }
        return send.uncopied?.count
    }

    /// Calls `body` with those bytes, if there are any.
    func withUncopiedBytes(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard case .send(let send) = self, let bytes = send.uncopied else { return }
        bytes.withUnsafeBytes(body)
    }
}
