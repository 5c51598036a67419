extension NetworkListener {
    /// Where a listener is in its life.
    public enum State: Equatable, Sendable {
        /// Made; it binds when `run` starts.
        case setup
        /// Cannot listen now (for example, the port is taken); it tries again when the network
        /// changes.
        case waiting(NWError)
        /// Listening.
        case ready
        /// Broken for good: `run` throws the error.
        case failed(NWError)
        /// Stopped; always the last state.
        case cancelled

        init(_ state: NWListener.State) {
            switch state {
            case .setup: self = .setup
            case .waiting(let error): self = .waiting(error)
            case .ready: self = .ready
            case .failed(let error): self = .failed(error)
            case .cancelled: self = .cancelled
            }
        }
    }

    /// A change to the listener's Bonjour registration.
    public enum ServiceRegistrationChange: Sendable {
        /// The service is advertised under this endpoint.
        case add(NWEndpoint)
        /// The service under this endpoint is no longer advertised.
        case remove(NWEndpoint)
    }
}
