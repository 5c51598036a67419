import NetworkCore

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
    /// address, with the endpoints in use. Computed when asked, from what the flow kept at ready.
    init(connectionFacts facts: FlowReadyFacts) {
        let path = facts.pathFacts()
        self.init(
            status: .satisfied,
            availableInterfaces: path.interfaces.map(NWInterface.init),
            isExpensive: path.isExpensive,
            isConstrained: path.isConstrained,
            supportsIPv4: path.supportsIPv4,
            supportsIPv6: path.supportsIPv6,
            supportsDNS: path.supportsDNS,
            localEndpoint: facts.localAddress.flatMap(NWEndpoint.init),
            remoteEndpoint: facts.remoteAddress.flatMap(NWEndpoint.init)
        )
    }
}
