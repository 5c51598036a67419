/// What another thread asks of a flow; waits in its mailbox until the event loop runs it.
enum FlowOperation: Sendable {
    case send(FlowSend)
    case receive(minimum: Int, maximum: Int, receiver: FlowReceiver)
    case other(@Sendable () -> Void)
}
