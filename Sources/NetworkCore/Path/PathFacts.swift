import NetworkSystem

/// A path as the engine sees it (the `Network` module turns it into an `NWPath`).
package struct PathFacts: Sendable, Equatable, CustomStringConvertible {
    package enum Status: Sendable, Equatable { case satisfied, unsatisfied }

    package var status: Status
    /// The interfaces the path may use, best first.
    package var interfaces: [SystemInterface]
    /// Default gateways over those interfaces (network-order bytes), best first.
    package var gateways: [(family: SocketFamily, bytes: [UInt8])]
    package var supportsIPv4: Bool
    package var supportsIPv6: Bool
    package var supportsDNS: Bool
    /// Facts of the first (preferred) interface.
    package var isExpensive: Bool
    package var isConstrained: Bool

    package static let unsatisfied = PathFacts(
        status: .unsatisfied, interfaces: [], gateways: [], supportsIPv4: false, supportsIPv6: false,
        supportsDNS: false, isExpensive: false, isConstrained: false)

    package static func == (lhs: PathFacts, rhs: PathFacts) -> Bool {
        lhs.status == rhs.status && lhs.interfaces == rhs.interfaces
            && lhs.gateways.map(\.family) == rhs.gateways.map(\.family) && lhs.gateways.map(\.bytes) == rhs.gateways.map(\.bytes)
            && lhs.supportsIPv4 == rhs.supportsIPv4 && lhs.supportsIPv6 == rhs.supportsIPv6
            && lhs.supportsDNS == rhs.supportsDNS && lhs.isExpensive == rhs.isExpensive
            && lhs.isConstrained == rhs.isConstrained
    }

    package var description: String {
        let names = interfaces.map { "\($0.name)(\($0.type))" }.joined(separator: ",")
        let via = gateways.map { SystemAddress(family: $0.family, bytes: $0.bytes, prefixLength: 0).presentation }
        return "\(status) interfaces=[\(names)] ipv4=\(supportsIPv4) ipv6=\(supportsIPv6) dns=\(supportsDNS) "
            + "gateways=\(via) expensive=\(isExpensive) constrained=\(isConstrained)"
    }
}
