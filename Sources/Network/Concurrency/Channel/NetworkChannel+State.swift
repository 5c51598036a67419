extension NetworkChannel {
    /// Where a connection is in its life.
    public enum State: Equatable, Sendable {
        /// Made, not started (it starts with the first send or receive).
        case setup
        /// Cannot connect now; it tries again when the network changes. Sends and receives
        /// keep waiting.
        case waiting(NWError)
        /// Resolving, connecting and running handshakes.
        case preparing
        /// Established: data flows.
        case ready
        /// Broken for good: sends and receives throw the error.
        case failed(NWError)
        /// Closed (released, its scope left, or its task cancelled); always the last state.
        case cancelled

        init(_ state: NWConnection.State) {
            switch state {
            case .setup: self = .setup
            case .waiting(let error): self = .waiting(error)
            case .preparing: self = .preparing
            case .ready: self = .ready
            case .failed(let error): self = .failed(error)
            case .cancelled: self = .cancelled
            }
        }
    }
}
