import NetworkCore

extension NWConnectionGroup {
    /// Where a group is in its life. A multiplex group follows its connection: `ready` once the
    /// handshake is done, `failed` when the connection ends with an error, `cancelled` last.
    public enum State: Equatable, Sendable {
        /// Created, not started (or started and still connecting).
        case setup
        /// It cannot go on yet for this reason, and tries again when the network changes.
        case waiting(NWError)
        /// Streams may be opened and received.
        case ready
        /// It ended with this error.
        case failed(NWError)
        /// It was cancelled; nothing follows.
        case cancelled

        /// The group state of a multicast group's engine socket state.
        init(_ state: FlowListenerState) {
            switch state {
            case .setup: self = .setup
            case .waiting(let error): self = .waiting(NWError(error))
            case .ready: self = .ready
            case .failed(let error): self = .failed(NWError(error))
            case .cancelled: self = .cancelled
            }
        }
    }
}
