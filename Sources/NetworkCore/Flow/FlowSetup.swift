import NIOCore

/// What an outbound flow needs only until it is established: its configuration, the
/// establishment in progress and its connection timeout and, while it waits, its watch on the
/// network.
/// Boxed in the flow and released at `ready`.
final class FlowSetup {
    let configuration: FlowConfiguration
    /// The establishment run in progress (`Flow.establishment`).
    var establishment: Establishment?
    /// Fails the establishment in progress when the connection timeout expires.
    var establishmentTimeout: Scheduled<Void>?
    /// While waiting: the path-engine subscription, and the path it saw first (a retry comes
    /// on a change from it, not on the snapshot every subscription starts with).
    var pathWatch: PathSubscription? {
        didSet { if pathWatch == nil { pathBaseline = nil } }
    }
    var pathBaseline: PathFacts?
    /// A framer above the transport failed an attempt (`markFailed`): its error ends the
    /// establishment for good once no other attempt succeeds, rather than waiting as a refused
    /// connect would (the peer was reached, and its protocol said no).
    var framerFailure: FlowError?

    init(_ configuration: FlowConfiguration) { self.configuration = configuration }
}
