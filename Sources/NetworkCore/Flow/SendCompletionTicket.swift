/// Handed with every send completion: the handler must run inside `run`, on the queue it is
/// delivered to. While it runs, sends it makes do not wake the flow's event loop one by one; the
/// loop is woken once it (or the chain of handlers it starts) returns (see `FlowInbox`).
/// (Datagram flows hand out empty tickets: their sends never complete early, and their
/// completions are batched per loop turn instead.)
package struct SendCompletionTicket: Sendable {
    let flow: Flow?
    let early: Bool

    package func run(_ handler: () -> Void) {
        guard let flow else { return handler() }
        flow.completionHandlerStarts(early: early)
        handler()
        flow.completionHandlerEnded()
    }
}
