import NIOCore
import NetworkCore
import NetworkSystem

extension NWInterface {
    init(_ system: SystemInterface) {
        let type: NWInterface.InterfaceType
        switch system.type {
        case .loopback: type = .loopback
        case .wifi: type = .wifi
        case .cellular: type = .cellular
        case .wiredEthernet: type = .wiredEthernet
        case .other: type = .other
        }
        self.init(name: system.name, index: system.index, type: type)
    }
}

extension NWPath {
    /// A monitor's path: no endpoints; interfaces, gateways and flags from the evaluator.
    init(monitorFacts facts: PathFacts) {
        self.init(
            status: facts.status == .satisfied ? .satisfied : .unsatisfied,
            availableInterfaces: facts.interfaces.map(NWInterface.init),
            isExpensive: facts.isExpensive,
            isConstrained: facts.isConstrained,
            supportsIPv4: facts.supportsIPv4,
            supportsIPv6: facts.supportsIPv6,
            supportsDNS: facts.supportsDNS,
            gateways: facts.gateways.compactMap(NWEndpoint.init(gateway:)))
    }

    /// The path of an established connection: satisfied, over the interface that owns the local
    /// address, with the endpoints in use. (Until the path-monitor issue lands this is computed
    /// once, when the connection becomes ready; it is not updated afterwards.)
    init(connectionSnapshot snapshot: FlowSnapshot) {
        let interfaces = InterfaceTable.current()
        var used: SystemInterface?
        if let local = snapshot.localAddress {
            let localBytes = Self.bytes(local)
            used = interfaces.first { interface in
                interface.addresses.contains { $0.bytes == localBytes }
            }
            if used == nil, let remote = snapshot.remoteAddress, Self.isLoopback(remote) {
                used = interfaces.first { $0.type == .loopback }
            }
        }
        let families = Set(interfaces.filter(\.isUp).flatMap { $0.addresses.map(\.family) })
        self.init(
            status: .satisfied,
            availableInterfaces: used.map { [NWInterface($0)] } ?? [],
            isExpensive: used?.isExpensive ?? false,
            isConstrained: used?.isConstrained ?? false,
            supportsIPv4: families.contains(.inet),
            supportsIPv6: families.contains(.inet6),
            supportsDNS: true,
            localEndpoint: snapshot.localAddress.flatMap(NWEndpoint.init),
            remoteEndpoint: snapshot.remoteAddress.flatMap(NWEndpoint.init)
        )
    }

    /// Network-order address bytes, IPv4-mapped IPv6 unmapped.
    static func bytes(_ address: SocketAddress) -> [UInt8] {
        switch address {
        case .v4(let v4): return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6):
            let raw = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            if raw[0..<10].allSatisfy({ $0 == 0 }) && raw[10] == 0xff && raw[11] == 0xff {
                return Array(raw[12...])
            }
            return raw
        case .unixDomainSocket: return []
        }
    }

    static func isLoopback(_ address: SocketAddress) -> Bool {
        let raw = bytes(address)
        return (raw.count == 4 && raw[0] == 127) || raw == [UInt8](repeating: 0, count: 15) + [1]
    }
}
