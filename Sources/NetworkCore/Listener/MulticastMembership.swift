/// What a multicast group's socket joins (`NWMulticastGroup`): a listener with a membership binds
/// the wildcard address of the groups' family on their port (IPv6's, dual-stack, for groups of
/// both families), joins each group once bound, and hands every datagram to one handler instead
/// of making a flow per peer.
package struct MulticastMembership: Sendable, Equatable {
    /// The group addresses (literals, each a multicast address, of either family).
    package var groups: [String]
    /// Source-specific multicast: only datagrams from this address (a literal of every group's
    /// family) arrive.
    package var source: String?
    /// Datagrams sent to the socket's own unicast address are dropped (only those sent to a
    /// group arrive).
    package var disableUnicast: Bool

    package init(groups: [String], source: String? = nil, disableUnicast: Bool = false) {
        self.groups = groups
        self.source = source
        self.disableUnicast = disableUnicast
    }
}
