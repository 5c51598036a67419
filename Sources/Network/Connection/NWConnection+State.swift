import NetworkCore

extension NWConnection {
    /// Where a connection is in its life cycle.
    public enum State: Equatable, Sendable {
        /// Created, not started yet.
        case setup
        /// Cannot connect now (no route, nothing listening, name not found); it tries again by
        /// itself when the network changes, or at once on `restart()`.
        case waiting(NWError)
        /// Resolving, connecting and running handshakes.
        case preparing
        /// Established: data can flow.
        case ready
        /// Broken for good; cancel the connection to release it.
        case failed(NWError)
        /// Cancelled; this is always the last state reported.
        case cancelled

        init(_ state: FlowConnectionState) {
            switch state {
            case .setup: self = .setup
            case .waiting(let error): self = .waiting(NWError(error))
            case .preparing: self = .preparing
            case .ready: self = .ready
            case .failed(let error): self = .failed(NWError(error))
            case .cancelled: self = .cancelled
            }
        }
    }

    /// What to do once a send has been handed to the stack.
    public enum SendCompletion: Sendable {
        /// Call this closure when the stack has taken the data (or with the error that stopped it).
        @preconcurrency case contentProcessed(@Sendable (NWError?) -> Void)
        /// No callback: the data may be sent more than once (for example in a TCP Fast Open SYN).
        case idempotent
    }
}
