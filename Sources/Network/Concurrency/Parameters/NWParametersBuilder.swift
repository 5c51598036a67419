/// Parameters written as a protocol stack plus fluent modifiers:
/// `.parameters { TLS() }.expensivePathsProhibited(true)`. Each modifier returns a changed
/// copy; ``parameters`` makes a new ``NWParameters`` from them.
public struct NWParametersBuilder<Top: NetworkProtocolOptions, each P: NetworkProtocolOptions>: NWParametersProvider,
    @unchecked Sendable
{
    // (`@unchecked`: `Top` is one of this module's Sendable building blocks; the stored
    // parameters are a private copy, never changed.)
    /// The stack's top layer as written (a connection's coder and layer settings come from it).
    let stackTop: Top
    /// The same, as a layer (further values the closure lists do not change the stack).
    let top: any StackLayer
    private let initialParameters: NWParameters?
    private var edits: [@Sendable (NWParameters) -> Void] = []

    /// Parameters for the stack `builder` writes.
    public init(@ProtocolStackBuilder<Top, repeat each P> _ builder: () -> (Top, repeat each P)) {
        let stack = builder()
        self.init(initialParameters: nil, top: stack.0)
    }

    /// Parameters for the stack `builder` gives, lower layers inferred as in the builder form.
    public init(auto builder: () -> (Top, repeat each P)) {
        let stack = builder()
        self.init(initialParameters: nil, top: stack.0)
    }

    // (The stack's tuple is taken apart where it is made: handing a tuple with a pack expansion
    // to another initializer crashes Swift 6.3's SIL generation.)
    private init(initialParameters: NWParameters?, top: Top) {
        self.initialParameters = initialParameters?.copy()
        stackTop = top
        self.top = UnsupportedStackLayer.layer(top)
    }

    /// Parameters for the stack `builder` writes (`using: .parameters { TLS() }`).
    public static func parameters(
        @ProtocolStackBuilder<Top, repeat each P> _ builder: () -> (Top, repeat each P)
    ) -> NWParametersBuilder<Top, repeat each P> {
        let stack = builder()
        return NWParametersBuilder(initialParameters: nil, top: stack.0)
    }

    /// Parameters starting from the classic `initialParameters` (for settings without a
    /// modifier, such as a proxy configuration), with the stack `builder` writes.
    public static func parameters(
        initialParameters: NWParameters,
        @ProtocolStackBuilder<Top, repeat each P> _ builder: () -> (Top, repeat each P)
    ) -> NWParametersBuilder<Top, repeat each P> {
        let stack = builder()
        return NWParametersBuilder(initialParameters: initialParameters, top: stack.0)
    }

    /// New parameters: the initial ones (or defaults), the stack, then the modifiers in order.
    public var parameters: NWParameters {
        let parameters = top.makeParameters(initial: initialParameters)
        for edit in edits { edit(parameters) }
        return parameters
    }

    private func with(_ edit: @escaping @Sendable (NWParameters) -> Void) -> NWParametersBuilder {
        var copy = self
        copy.edits.append(edit)
        return copy
    }

    public func requiredInterface(_ interface: NWInterface) -> NWParametersBuilder { with { _ = $0.requiredInterface(interface) } }
    public func requiredInterfaceType(_ type: NWInterface.InterfaceType) -> NWParametersBuilder { with { _ = $0.requiredInterfaceType(type) } }
    public func prohibitedInterfaces(_ interfaces: [NWInterface]) -> NWParametersBuilder { with { _ = $0.prohibitedInterfaces(interfaces) } }
    public func prohibitedInterfaceTypes(_ types: [NWInterface.InterfaceType]) -> NWParametersBuilder {
        with { _ = $0.prohibitedInterfaceTypes(types) }
    }
    public func expensivePathsProhibited(_ prohibited: Bool) -> NWParametersBuilder { with { _ = $0.expensivePathsProhibited(prohibited) } }
    public func constrainedPathsProhibited(_ prohibited: Bool) -> NWParametersBuilder { with { _ = $0.constrainedPathsProhibited(prohibited) } }
    public func ultraConstrainedPathsAllowed(_ allowed: Bool) -> NWParametersBuilder { with { _ = $0.ultraConstrainedPathsAllowed(allowed) } }
    public func localEndpoint(_ endpoint: NWEndpoint?) -> NWParametersBuilder { with { _ = $0.localEndpoint(endpoint) } }
    public func localPort(_ port: NWEndpoint.Port) -> NWParametersBuilder { with { _ = $0.localPort(port) } }
    public func localEndpointReuseAllowed(_ allowed: Bool) -> NWParametersBuilder { with { _ = $0.localEndpointReuseAllowed(allowed) } }
    public func localOnly(_ local: Bool) -> NWParametersBuilder { with { _ = $0.localOnly(local) } }
    public func peerToPeerIncluded(_ included: Bool) -> NWParametersBuilder { with { _ = $0.peerToPeerIncluded(included) } }
    public func noProxiesPreferred(_ preferred: Bool) -> NWParametersBuilder { with { _ = $0.noProxiesPreferred(preferred) } }
    public func fastOpenAllowed(_ allowed: Bool) -> NWParametersBuilder { with { _ = $0.fastOpenAllowed(allowed) } }
    public func expiredDNSBehavior(_ behavior: NWParameters.ExpiredDNSBehavior) -> NWParametersBuilder {
        with { _ = $0.expiredDNSBehavior(behavior) }
    }
    public func dnssecValidationRequired(_ required: Bool) -> NWParametersBuilder { with { _ = $0.dnssecValidationRequired(required) } }
    public func serviceClass(_ serviceClass: NWParameters.ServiceClass) -> NWParametersBuilder { with { _ = $0.serviceClass(serviceClass) } }
    public func multipathServiceType(_ type: NWParameters.MultipathServiceType) -> NWParametersBuilder {
        with { _ = $0.multipathServiceType(type) }
    }
}
