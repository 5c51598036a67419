import NetworkSystem

/// Turns a snapshot of the system (`PathInputs`) into a path for given requirements.
///
/// Rules (Linux's reading of Apple's "a usable route exists"):
/// - An interface is usable when it is allowed, up, has carrier, and is not loopback (unless
///   loopback is what was required).
/// - A family is supported over a usable interface with an address of it that is not
///   link-local, default route or not: a network without a router still carries connections
///   to its neighbours (a usable interface needs such an address).
/// - Satisfied when some usable interface supports a family; loopback required: when `lo` is up.
/// - Interfaces are ordered by their best default-route metric (those without one last), then
///   wired before Wi-Fi before cellular before other, then by index.
/// - DNS is supported when the path is satisfied and the resolver has a name server.
package enum PathEvaluator {
    package static func evaluate(_ inputs: PathInputs, _ requirements: PathRequirements = PathRequirements()) -> PathFacts {
        let wantsLoopback = requirements.requiredType == .loopback
        var candidates: [(interface: SystemInterface, metric: UInt32?, v4: Bool, v6: Bool)] = []
        for interface in inputs.interfaces {
            guard requirements.allows(interface), interface.isUp else { continue }
            if interface.type == .loopback {
                guard wantsLoopback else { continue }
                candidates.append((interface, nil, interface.addresses.contains { $0.family == .inet },
                                   interface.addresses.contains { $0.family == .inet6 }))
                continue
            }
            guard interface.isRunning else { continue }
            let defaults = inputs.routes.filter { $0.isDefault && $0.interfaceName == interface.name }
            let v4 = interface.addresses.contains { $0.family == .inet && !isLinkLocal($0) }
            let v6 = interface.addresses.contains { $0.family == .inet6 && !isLinkLocal($0) }
            guard v4 || v6 else { continue }
            candidates.append((interface, defaults.map(\.metric).min(), v4, v6))
        }
        guard !candidates.isEmpty else { return .unsatisfied }
        candidates.sort { a, b in
            switch (a.metric, b.metric) {
            case let (x?, y?) where x != y: return x < y
            case (.some, nil): return true
            case (nil, .some): return false
            default:
                let ra = rank(a.interface.type), rb = rank(b.interface.type)
                return ra != rb ? ra < rb : a.interface.index < b.interface.index
            }
        }
        let gateways = inputs.routes.defaultGateways(over: Set(candidates.map(\.interface.name)))
        let first = candidates[0].interface
        return PathFacts(
            status: .satisfied,
            interfaces: candidates.map(\.interface),
            gateways: gateways,
            supportsIPv4: candidates.contains { $0.v4 },
            supportsIPv6: candidates.contains { $0.v6 },
            supportsDNS: inputs.hasNameServers,
            isExpensive: first.isExpensive,
            isConstrained: first.isConstrained)
    }

    private static func rank(_ type: SystemInterfaceType) -> Int {
        switch type {
        case .wiredEthernet: return 0
        case .wifi: return 1
        case .cellular: return 2
        case .other: return 3
        case .loopback: return 4
        }
    }

    /// 169.254.0.0/16 and fe80::/10: usable only on the link, never a route to anywhere.
    private static func isLinkLocal(_ address: SystemAddress) -> Bool {
        switch address.family {
        case .inet: return address.bytes.count == 4 && address.bytes[0] == 169 && address.bytes[1] == 254
        case .inet6: return address.bytes.count == 16 && address.bytes[0] == 0xfe && address.bytes[1] & 0xc0 == 0x80
        }
    }
}
