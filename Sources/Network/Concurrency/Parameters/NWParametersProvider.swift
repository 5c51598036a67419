/// Something that makes ``NWParameters`` and takes the parameters' fluent modifiers:
/// ``NWParametersBuilder`` (each modifier returns a changed copy) and ``NWParameters`` itself
/// (each modifier changes the object and returns it).
public protocol NWParametersProvider {
    /// The parameters made.
    var parameters: NWParameters { get }
    /// Only this interface may carry the connection.
    func requiredInterface(_ interface: NWInterface) -> Self
    /// Only interfaces of this type may carry the connection.
    func requiredInterfaceType(_ type: NWInterface.InterfaceType) -> Self
    /// These interfaces may not carry the connection.
    func prohibitedInterfaces(_ interfaces: [NWInterface]) -> Self
    /// Interfaces of these types may not carry the connection.
    func prohibitedInterfaceTypes(_ types: [NWInterface.InterfaceType]) -> Self
    /// Whether expensive paths (cellular, hotspots) are refused.
    func expensivePathsProhibited(_ prohibited: Bool) -> Self
    /// Whether constrained paths (low-data mode) are refused.
    func constrainedPathsProhibited(_ prohibited: Bool) -> Self
    /// Whether ultra-constrained paths may be used.
    func ultraConstrainedPathsAllowed(_ allowed: Bool) -> Self
    /// The local address and port to use (nil: the system chooses).
    func localEndpoint(_ endpoint: NWEndpoint?) -> Self
    /// The local port to use, the address left to the system (for a listener, the port it
    /// listens on).
    func localPort(_ port: NWEndpoint.Port) -> Self
    /// Whether the local address and port may be shared with other sockets.
    func localEndpointReuseAllowed(_ allowed: Bool) -> Self
    /// Whether a listener accepts only peers on the local network.
    func localOnly(_ local: Bool) -> Self
    /// Whether peer-to-peer interfaces may be used.
    func peerToPeerIncluded(_ included: Bool) -> Self
    /// Whether to connect directly rather than through a configured proxy when possible.
    func noProxiesPreferred(_ preferred: Bool) -> Self
    /// Whether TCP Fast Open may carry idempotent data in the SYN.
    func fastOpenAllowed(_ allowed: Bool) -> Self
    /// Whether expired DNS answers may be used while fresh ones are fetched.
    func expiredDNSBehavior(_ behavior: NWParameters.ExpiredDNSBehavior) -> Self
    /// Whether DNS answers must be validated with DNSSEC.
    func dnssecValidationRequired(_ required: Bool) -> Self
    /// The traffic class of the connection's packets.
    func serviceClass(_ serviceClass: NWParameters.ServiceClass) -> Self
    /// Whether and how Multipath TCP is used.
    func multipathServiceType(_ type: NWParameters.MultipathServiceType) -> Self
}
