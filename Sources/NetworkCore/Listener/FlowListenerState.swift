/// The states of a listener, mirroring `NWListener.State`.
package enum FlowListenerState: Equatable, Hashable, Sendable {
    case setup
    case waiting(FlowError)
    case ready
    case failed(FlowError)
    case cancelled
}
