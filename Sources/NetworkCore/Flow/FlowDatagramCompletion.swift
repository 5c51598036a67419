/// A datagram send's completion as the engine carries it: an object, so that the send holding
/// it is a plain value. (An existential of any type made `FlowSend`, and every operation and
/// outbox entry holding one, address-only: each hand-on copied it through value witnesses,
/// fourteen copies and 28 retains of a UDP send's completion between `send` and its callback,
/// counted with uprobes. One allocation per send is cheaper than that.) The engine gathers the
/// completions that one flush settles and hands them over together (`deliver`), so a batch of
/// datagrams costs one hand-over, not one per datagram.
package protocol FlowDatagramCompletion: AnyObject, Sendable {
    /// Runs this completion with its send's result. Called by whoever runs a batch, in order.
    func run(_ error: FlowError?)

    /// Hands `batch` (completions of this completion's flow, in send order, this one among
    /// them) on to where they run, in one piece. Called on the flow's event loop, on the
    /// batch's first completion: every completion of one flow must be of one kind.
    func deliver(_ batch: FlowDatagramCompletions)

    /// The framer metadata the message was sent with (nil for none): on a framed flow, a send's
    /// completion carries it to the framer.
    var framerMessage: (any AnyObject & Sendable)? { get }
}

extension FlowDatagramCompletion {
    /// None, for completions of flows without framers.
    package var framerMessage: (any AnyObject & Sendable)? { nil }
}
