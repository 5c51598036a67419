/// What the `Network` module needs from a listener, in its own terms.
extension FlowListener {
    /// Binds and starts accepting, as `start(stateHandler:newFlowHandler:)`, with each new flow's
    /// peer as a `FlowAddress`.
    package func startAccepting(
        stateHandler: @escaping StateHandler, newConnectionHandler: @escaping @Sendable (Flow, FlowAddress?) -> Void
    ) {
        start(stateHandler: stateHandler) { flow, remote in newConnectionHandler(flow, remote.map(FlowAddress.init)) }
    }
}
