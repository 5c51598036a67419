extension NWParameters: NWParametersProvider {
    /// The parameters themselves.
    public var parameters: NWParameters { self }

    private func changed(_ change: (NWParameters) -> Void) -> NWParameters {
        change(self)
        return self
    }

    public func requiredInterface(_ interface: NWInterface) -> NWParameters { changed { $0.requiredInterface = interface } }
    public func requiredInterfaceType(_ type: NWInterface.InterfaceType) -> NWParameters { changed { $0.requiredInterfaceType = type } }
    public func prohibitedInterfaces(_ interfaces: [NWInterface]) -> NWParameters { changed { $0.prohibitedInterfaces = interfaces } }
    public func prohibitedInterfaceTypes(_ types: [NWInterface.InterfaceType]) -> NWParameters {
        changed { $0.prohibitedInterfaceTypes = types }
    }
    public func expensivePathsProhibited(_ prohibited: Bool) -> NWParameters { changed { $0.prohibitExpensivePaths = prohibited } }
    public func constrainedPathsProhibited(_ prohibited: Bool) -> NWParameters { changed { $0.prohibitConstrainedPaths = prohibited } }
    public func ultraConstrainedPathsAllowed(_ allowed: Bool) -> NWParameters { changed { $0.allowUltraConstrainedPaths = allowed } }
    public func localEndpoint(_ endpoint: NWEndpoint?) -> NWParameters { changed { $0.requiredLocalEndpoint = endpoint } }
    public func localPort(_ port: NWEndpoint.Port) -> NWParameters {
        // The IPv6 wildcard: a connection binds the wildcard of its remote's family with this
        // port, a listener listens on both families.
        changed { $0.requiredLocalEndpoint = .hostPort(host: .ipv6(.any), port: port) }
    }
    public func localEndpointReuseAllowed(_ allowed: Bool) -> NWParameters { changed { $0.allowLocalEndpointReuse = allowed } }
    public func localOnly(_ local: Bool) -> NWParameters { changed { $0.acceptLocalOnly = local } }
    public func peerToPeerIncluded(_ included: Bool) -> NWParameters { changed { $0.includePeerToPeer = included } }
    public func noProxiesPreferred(_ preferred: Bool) -> NWParameters { changed { $0.preferNoProxies = preferred } }
    public func fastOpenAllowed(_ allowed: Bool) -> NWParameters { changed { $0.allowFastOpen = allowed } }
    public func expiredDNSBehavior(_ behavior: NWParameters.ExpiredDNSBehavior) -> NWParameters {
        changed { $0.expiredDNSBehavior = behavior }
    }
    public func dnssecValidationRequired(_ required: Bool) -> NWParameters { changed { $0.requiresDNSSECValidation = required } }
    public func serviceClass(_ serviceClass: NWParameters.ServiceClass) -> NWParameters { changed { $0.serviceClass = serviceClass } }
    public func multipathServiceType(_ type: NWParameters.MultipathServiceType) -> NWParameters {
        changed { $0.multipathServiceType = type }
    }
}
