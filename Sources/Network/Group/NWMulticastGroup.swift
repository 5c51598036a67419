import NetworkCore

/// A group made of multicast addresses: an ``NWConnectionGroup`` with it and UDP parameters
/// joins every address on their port, receives what is sent to them (with each sender) and sends
/// to all of them. On Linux no entitlement is asked for.
public final class NWMulticastGroup: NWGroupDescriptor, @unchecked Sendable {
    /// The group addresses, each with the port.
    public let members: [NWEndpoint]
    /// Source-specific multicast: the one sender the group takes datagrams from (RFC 4607), nil
    /// for any sender.
    public final let sourceFilter: NWEndpoint?
    /// Whether datagrams sent to this host's own address on the group's port are dropped, so
    /// that only multicast arrives.
    public final let isUnicastDisabled: Bool

    /// A group of `groupAddresses` (IPv4 or IPv6 multicast addresses, of either family or both,
    /// each with the same port), taking datagrams only from `sourceEndpoint` when given (its
    /// port is not used). Throws `NWError.posix(.EINVAL)` for an empty list, an address that is
    /// not a multicast one, mixed ports, or a source whose family is not every group's.
    public init(for groupAddresses: [NWEndpoint], from sourceEndpoint: NWEndpoint? = nil, disableUnicast: Bool = false) throws {
        guard let first = groupAddresses.first, case .hostPort(_, let port) = first else { throw NWError.posix(.EINVAL) }
        var hasIPv4 = false, hasIPv6 = false
        for member in groupAddresses {
            guard case .hostPort(let host, let memberPort) = member, memberPort == port else { throw NWError.posix(.EINVAL) }
            switch host {
            case .ipv4(let address) where address.isMulticast: hasIPv4 = true
            case .ipv6(let address) where address.isMulticast: hasIPv6 = true
            default: throw NWError.posix(.EINVAL)
            }
        }
        if let sourceEndpoint {
            // (Source-specific membership is per family: a source of one cannot filter the other's groups.)
            guard case .hostPort(let host, _) = sourceEndpoint else { throw NWError.posix(.EINVAL) }
            switch host {
            case .ipv4 where !hasIPv6, .ipv6 where !hasIPv4: break
            default: throw NWError.posix(.EINVAL)
            }
        }
        self.members = groupAddresses
        self.sourceFilter = sourceEndpoint
        self.isUnicastDisabled = disableUnicast
    }

    /// The port every member shares.
    var port: NWEndpoint.Port {
        guard case .hostPort(_, let port) = members.first else { return .any }
        return port
    }

    /// What the engine joins: the members and the source as address literals.
    var membership: MulticastMembership {
        MulticastMembership(
            groups: members.compactMap(Self.literal), source: sourceFilter.flatMap(Self.literal),
            disableUnicast: isUnicastDisabled)
    }

    /// The address literal of a member or source (the initializer let only IP addresses in).
    private static func literal(_ endpoint: NWEndpoint) -> String? {
        guard case .success(.hostPort(let host, _, _)) = endpoint.flowTarget() else { return nil }
        return host
    }
}
