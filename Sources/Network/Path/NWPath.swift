import Foundation

/// A snapshot of the routes and interfaces available to a connection, a listener or a path
/// monitor at one moment.
///
/// Paths are immutable values; when conditions change the framework delivers a new one.
/// Two paths are equal when every property is equal.
public struct NWPath: CustomDebugStringConvertible, Equatable, Sendable {

    /// Whether a path can be used.
    public enum Status: Equatable, Hashable, Sendable {
        /// A usable route exists.
        case satisfied
        /// No usable route exists; see ``NWPath/unsatisfiedReason``.
        case unsatisfied
        /// No route exists yet, but starting a connection would bring one up (for example by
        /// activating an on-demand link).
        case requiresConnection
    }

    /// Why a path is unsatisfied.
    public enum UnsatisfiedReason: Equatable, Hashable, Sendable {
        /// No specific reason is known, or the path is satisfied.
        case notAvailable
        /// The user disabled cellular data for this application.
        case cellularDenied
        /// The user disabled Wi-Fi for this application.
        case wifiDenied
        /// The user denied access to the local network.
        case localNetworkDenied
        /// A required VPN is not active.
        case vpnInactive
    }

    /// A coarse estimate of how well the link performs.
    public enum LinkQuality: Equatable, Hashable, Sendable {
        /// Nothing is known about the link quality.
        case unknown
        /// The link barely works.
        case minimal
        /// The link works with noticeable limitations.
        case moderate
        /// The link works well.
        case good
    }

    /// Whether the path is usable.
    public let status: NWPath.Status

    /// Why the path is unsatisfied; ``UnsatisfiedReason/notAvailable`` when it is satisfied.
    public private(set) var unsatisfiedReason: NWPath.UnsatisfiedReason

    /// The interfaces traffic on this path may use, most preferred first.
    public let availableInterfaces: [NWInterface]

    /// Whether the path uses an interface considered expensive (cellular, a personal hotspot,
    /// or one an administrator marked so).
    public let isExpensive: Bool

    /// Whether the path uses an interface in a data-saving ("low data") mode.
    public private(set) var isConstrained: Bool

    /// Whether the path uses an interface with very tight data limits.
    public private(set) var isUltraConstrained: Bool

    /// A coarse estimate of the link quality.
    public private(set) var linkQuality: NWPath.LinkQuality

    /// Whether IPv4 can be used on this path.
    public let supportsIPv4: Bool

    /// Whether IPv6 can be used on this path.
    public let supportsIPv6: Bool

    /// Whether a DNS server is configured for this path.
    public let supportsDNS: Bool

    /// The gateways (default routers) of the path's interfaces.
    public private(set) var gateways: [NWEndpoint]

    /// The local endpoint of a connection's path; nil for monitor paths.
    public let localEndpoint: NWEndpoint?

    /// The remote endpoint of a connection's path; nil for monitor paths.
    public let remoteEndpoint: NWEndpoint?

    /// Creates a path snapshot; used by the engine's path evaluator.
    package init(
        status: NWPath.Status,
        unsatisfiedReason: NWPath.UnsatisfiedReason = .notAvailable,
        availableInterfaces: [NWInterface] = [],
        isExpensive: Bool = false,
        isConstrained: Bool = false,
        isUltraConstrained: Bool = false,
        linkQuality: NWPath.LinkQuality = .unknown,
        supportsIPv4: Bool = false,
        supportsIPv6: Bool = false,
        supportsDNS: Bool = false,
        gateways: [NWEndpoint] = [],
        localEndpoint: NWEndpoint? = nil,
        remoteEndpoint: NWEndpoint? = nil
    ) {
        self.status = status
        self.unsatisfiedReason = unsatisfiedReason
        self.availableInterfaces = availableInterfaces
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
        self.isUltraConstrained = isUltraConstrained
        self.linkQuality = linkQuality
        self.supportsIPv4 = supportsIPv4
        self.supportsIPv6 = supportsIPv6
        self.supportsDNS = supportsDNS
        self.gateways = gateways
        self.localEndpoint = localEndpoint
        self.remoteEndpoint = remoteEndpoint
    }

    /// Whether traffic on this path may use an interface of the given type, that is whether one
    /// of ``availableInterfaces`` has that type.
    public func usesInterfaceType(_ type: NWInterface.InterfaceType) -> Bool {
        availableInterfaces.contains { $0.type == type }
    }

    /// A one-line summary: the status (with the reason when unsatisfied), the interfaces, the
    /// supported families and DNS, and the expensive/constrained flags.
    public var debugDescription: String {
        var parts: [String] = []
        switch status {
        case .satisfied: parts.append("satisfied")
        case .requiresConnection: parts.append("requires connection")
        case .unsatisfied: parts.append("unsatisfied (\(unsatisfiedReason))")
        }
        if !availableInterfaces.isEmpty {
            parts.append("interfaces: " + availableInterfaces.map(\.name).joined(separator: " "))
        }
        if supportsIPv4 { parts.append("ipv4") }
        if supportsIPv6 { parts.append("ipv6") }
        if supportsDNS { parts.append("dns") }
        if isExpensive { parts.append("expensive") }
        if isConstrained { parts.append("constrained") }
        if isUltraConstrained { parts.append("ultra-constrained") }
        if linkQuality != .unknown { parts.append("link quality: \(linkQuality)") }
        if let localEndpoint { parts.append("local: \(localEndpoint.debugDescription)") }
        if let remoteEndpoint { parts.append("remote: \(remoteEndpoint.debugDescription)") }
        return parts.joined(separator: ", ")
    }
}
