import NetworkSystem

/// What a path is computed from: the interfaces, the main routing tables, and whether the
/// resolver has a name server. One snapshot, taken after a change.
package struct PathInputs: Sendable, Equatable {
    package var interfaces: [SystemInterface]
    package var routes: [SystemRoute]
    package var hasNameServers: Bool

    package init(interfaces: [SystemInterface], routes: [SystemRoute], hasNameServers: Bool) {
        self.interfaces = interfaces
        self.routes = routes
        self.hasNameServers = hasNameServers
    }
}

/// Which interfaces a path may use (`NWPathMonitor(requiredInterfaceType:)`,
/// `NWPathMonitor(prohibitedInterfaceTypes:)`, the parameters' interface rules).
package struct PathRequirements: Sendable, Equatable {
    package var requiredType: SystemInterfaceType?
    package var prohibitedTypes: Set<SystemInterfaceType> = []
    package var requiredInterfaceName: String?
    package var prohibitExpensive = false
    package var prohibitConstrained = false

    package init(requiredType: SystemInterfaceType? = nil, prohibitedTypes: Set<SystemInterfaceType> = []) {
        self.requiredType = requiredType
        self.prohibitedTypes = prohibitedTypes
    }

    /// Whether traffic may use `interface` at all.
    package func allows(_ interface: SystemInterface) -> Bool {
        if let requiredType, interface.type != requiredType { return false }
        if prohibitedTypes.contains(interface.type) { return false }
        if let requiredInterfaceName, interface.name != requiredInterfaceName { return false }
        if prohibitExpensive && interface.isExpensive { return false }
        if prohibitConstrained && interface.isConstrained { return false }
        return true
    }
}

extension FlowConfiguration {
    /// The interfaces this flow may use, as path requirements.
    package var pathRequirements: PathRequirements {
        var requirements = PathRequirements(requiredType: requiredInterfaceType, prohibitedTypes: Set(prohibitedInterfaceTypes))
        requirements.requiredInterfaceName = requiredInterfaceIndex.flatMap(InterfaceTable.name(index:))
        requirements.prohibitExpensive = prohibitExpensive
        requirements.prohibitConstrained = prohibitConstrained
        return requirements
    }
}
