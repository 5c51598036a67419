/// The states of one flow, mirroring `NWConnection.State`: what the flow reports, the projection
/// of `FlowStateMachine.State` (which also carries each state's data).
package enum FlowConnectionState: Equatable, Hashable, Sendable {
    case setup
    case waiting(FlowError)
    case preparing
    case ready
    case failed(FlowError)
    case cancelled
}
