import NIOCore

/// The DNS answer an address came from. Happy Eyeballs alternates between the two, so a family
/// that is broken on this network costs one attempt delay, not a timeout.
package enum AddressFamily: Sendable, Hashable, CaseIterable {
    /// AAAA answers.
    case ipv6
    /// A answers. Non-IP destinations (unix paths) travel here too: only interleaving looks at
    /// the family, and a single candidate has nothing to interleave with.
    case ipv4

    package init(of address: SocketAddress) {
        self = address.protocol == .inet6 ? .ipv6 : .ipv4
    }

    /// The family to alternate with.
    package var other: AddressFamily {
        self == .ipv6 ? .ipv4 : .ipv6
    }
}

/// One address the racer may connect to, with its RFC 6724 key (larger is better).
package struct RaceCandidate: Sendable, Hashable {
    package var address: SocketAddress
    package var rank: AddressSorting.Key

    package init(address: SocketAddress, rank: AddressSorting.Key = .neutral) {
        self.address = address
        self.rank = rank
    }

    package var family: AddressFamily { AddressFamily(of: address) }
}
