/// What a building block of the structured-concurrency API puts into a connection's protocol
/// stack. Every block conforms (internally); blocks hold the layer below them as a
/// `StackLayer`, so a whole stack is described by its top.
protocol StackLayer: Sendable {
    /// Adds this layer, then the layers below it, to `plan`.
    func addLayers(to plan: inout StackPlan)
}

extension StackLayer {
    /// The classic parameters for a stack with this layer at the top, starting from `initial`
    /// (a copy is taken) or from empty parameters.
    func makeParameters(initial: NWParameters? = nil) -> NWParameters {
        var plan = StackPlan()
        addLayers(to: &plan)
        let parameters = initial?.copy() ?? NWParameters()
        let stack = parameters.defaultProtocolStack
        stack.applicationProtocols = plan.application
        stack.transportProtocol = plan.unsupported ? nil : plan.transport
        if let ip = plan.ip { stack.internetProtocol = ip }
        return parameters
    }
}

/// The classic protocol options a stack of building blocks adds up to.
struct StackPlan {
    /// Application protocols, the top one first (the order of `applicationProtocols`).
    var application: [NWProtocolOptions] = []
    var transport: NWProtocolOptions?
    var ip: NWProtocolIP.Options?
    /// A layer could not be expressed (see `UnsupportedStackLayer`); nothing may replace it.
    var unsupported = false
}
