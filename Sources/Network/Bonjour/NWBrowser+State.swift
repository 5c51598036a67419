extension NWBrowser {
    /// Where a browser is in its life cycle.
    public enum State: Equatable, Sendable {
        /// Created, not started.
        case setup
        /// Browsing; results come as they are found.
        case ready
        /// Browsing is impossible (for example a malformed service type: `kDNSServiceErr_BadParam`).
        case failed(NWError)
        /// Cancelled; always the last state.
        case cancelled
        /// Cannot browse now; it goes on when the network allows.
        case waiting(NWError)
    }
}
