/// A layer written with a protocol type this module does not define: the stack it is in names
/// no transport, so the connection fails with `EPROTONOSUPPORT` instead of running without it.
struct UnsupportedStackLayer: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        plan.transport = nil
        plan.unsupported = true
    }

    /// `value` as a layer of a stack.
    static func layer(_ value: some NetworkProtocolOptions) -> any StackLayer {
        (value as? any StackLayer) ?? UnsupportedStackLayer()
    }
}
