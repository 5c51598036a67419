import NetworkSystem

/// A path as the engine sees it (the `Network` module turns it into an `NWPath`).
package struct PathFacts: Sendable, Equatable, CustomStringConvertible {
    package enum Status: Sendable, Equatable { case satisfied, unsatisfied }

    package var status: Status
    /// The interfaces the path may use, best first.
    package var interfaces: [SystemInterface]
    /// The default routes (with a gateway) over those interfaces, best first.
    package var gateways: [SystemRoute]
    package var supportsIPv4: Bool
    package var supportsIPv6: Bool
    package var supportsDNS: Bool
    /// Facts of the first (preferred) interface.
    package var isExpensive: Bool
    package var isConstrained: Bool

    package static let unsatisfied = PathFacts(
        status: .unsatisfied, interfaces: [], gateways: [], supportsIPv4: false, supportsIPv6: false,
        supportsDNS: false, isExpensive: false, isConstrained: false)

    package var description: String {
        let names = interfaces.map { "\($0.name)(\($0.type))" }.joined(separator: ",")
        let via = gateways.compactMap { route in
            route.gateway.map { SystemAddress(family: route.family, bytes: $0, prefixLength: 0).presentation }
        }
        return "\(status) interfaces=[\(names)] ipv4=\(supportsIPv4) ipv6=\(supportsIPv6) dns=\(supportsDNS) "
            + "gateways=\(via) expensive=\(isExpensive) constrained=\(isConstrained)"
    }
}
