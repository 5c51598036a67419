import NIOCore

/// The bounds on a datagram listener's peers (the rule is `DatagramPeerTable`'s). The defaults
/// bound a listener's peers to a few tens of megabytes however many source addresses send to it.
package struct DatagramPeerLimits: Sendable {
    /// Peers in all, started or not.
    package var maximumPeers = 8_192
    /// Peers handed to the application but not started yet.
    package var maximumUnstarted = 1_024
    /// How long a peer must have been idle (nothing sent or received) before a new address may
    /// take its slot in a full table.
    package var idleBeforeEviction: TimeAmount = .seconds(10)

    package init() {}
}
