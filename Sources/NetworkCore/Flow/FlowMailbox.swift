import Synchronization

/// Where a flow's operations from other threads wait for its event loop: the lock-protected
/// `FlowInbox` (the rules of when to wake the loop) and its `SendBudget`. Stored inline in the
/// flow, so it costs no allocation of its own. Each method answers whether the caller must now
/// wake the loop, which then drains the mailbox with `take()`.
struct FlowMailbox: ~Copyable {
    private let inbox = Mutex(FlowInbox<FlowOperation>())

    /// Queues `operation`; true when the loop must be woken.
    func submit(_ operation: FlowOperation) -> Bool {
        inbox.withLock { $0.append(operation) }
    }

    /// Queues a stream send, admitting it to the send budget. A send whose bytes fit completes
    /// now: `completeNow` runs under the lock, so concurrent senders' completions keep their
    /// order. True when the loop must be woken.
    func submitStreamSend(_ send: FlowSend, completeNow: (FlowSend) -> Void) -> Bool {
        inbox.withLock { inbox -> Bool in
            var send = send
            let admission = inbox.admitSend(
                bytes: send.byteCount, hasCompletion: send.completion != nil, closesWrite: send.closesWrite)
            send.counted = admission.counted
            if admission.completeNow {
                completeNow(send)
                send.completion = nil
            }
            return inbox.append(.send(send))
        }
    }

    /// Everything queued, for the loop.
    func take() -> [FlowOperation] {
        inbox.withLock { $0.take() }
    }

    func beginBatch() {
        inbox.withLock { $0.beginBatch() }
    }

    /// True when the loop must be woken.
    func endBatch() -> Bool {
        inbox.withLock { $0.endBatch() }
    }

    func handlerStarts(early: Bool) {
        inbox.withLock { $0.handlerStarts(early: early) }
    }

    /// True when the loop must be woken.
    func handlerEnded() -> Bool {
        inbox.withLock { $0.handlerEnded() }
    }

    /// Reads or changes the send budget under the lock.
    func budget<T: Sendable>(_ body: (inout SendBudget) -> T) -> T {
        inbox.withLock { body(&$0.budget) }
    }
}
