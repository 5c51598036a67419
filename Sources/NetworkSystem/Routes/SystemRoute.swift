/// One route of the kernel's main table that matters for a path: a default route (or, for the
/// table as a whole, any route), with its interface, gateway and metric.
package struct SystemRoute: Sendable, Hashable, CustomStringConvertible {
    package var family: SocketFamily
    /// The interface the route leaves through.
    package var interfaceName: String
    /// Network-order destination bytes (4 or 16) and prefix length; 0/0 is a default route.
    package var destination: [UInt8]
    package var prefixLength: Int
    /// Network-order gateway bytes, when the route has one (`RTF_GATEWAY`).
    package var gateway: [UInt8]?
    package var metric: UInt32

    package init(
        family: SocketFamily, interfaceName: String, destination: [UInt8], prefixLength: Int,
        gateway: [UInt8]?, metric: UInt32
    ) {
        self.family = family
        self.interfaceName = interfaceName
        self.destination = destination
        self.prefixLength = prefixLength
        self.gateway = gateway
        self.metric = metric
    }

    /// Whether this is a default route (0.0.0.0/0 or ::/0).
    package var isDefault: Bool { prefixLength == 0 }

    package var description: String {
        let target = isDefault ? "default" : "\(SystemAddress(family: family, bytes: destination, prefixLength: prefixLength))"
        let via = gateway.map { " via \(SystemAddress(family: family, bytes: $0, prefixLength: family == .inet ? 32 : 128).presentation)" } ?? ""
        return "\(target)\(via) dev \(interfaceName) metric \(metric)"
    }
}

extension Array where Element == SystemRoute {
    /// The default routes with a gateway that leave through one of `interfaceNames`, lowest
    /// metric first.
    package func defaultGateways(over interfaceNames: Set<String>) -> [SystemRoute] {
        filter { $0.isDefault && $0.gateway != nil && interfaceNames.contains($0.interfaceName) }.sorted { $0.metric < $1.metric }
    }
}
