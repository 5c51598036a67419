/// What the `Network` module needs from a listener, in its own terms.
extension FlowListener {
    /// Binds and starts accepting, as `start(stateHandler:newFlowHandler:)`, with each new flow's
    /// peer as a `FlowAddress`.
    /// With `newGroupHandler`, a QUIC listener hands over each connection as a group's flow
    /// (see `Flow.takeQUICPeerStreams`) instead of each stream as a flow.
    package func startAccepting(
        stateHandler: @escaping StateHandler, newConnectionHandler: @escaping @Sendable (Flow, FlowAddress?) -> Void,
        newGroupHandler: (@Sendable (Flow, FlowAddress?) -> Void)? = nil
    ) {
        var groups: NewFlowHandler?
        if let newGroupHandler {
            groups = { @Sendable flow, remote in newGroupHandler(flow, remote.map(FlowAddress.init)) }
        }
        start(
            stateHandler: stateHandler,
            newFlowHandler: { flow, remote in newConnectionHandler(flow, remote.map(FlowAddress.init)) },
            newQUICGroupHandler: groups)
    }
}
