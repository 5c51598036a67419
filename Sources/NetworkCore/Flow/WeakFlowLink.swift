/// A weak link, for accepted flows: one may be dropped before it is started, and its `deinit`
/// must then close the socket, which a handler holding it would prevent.
struct WeakFlowLink: FlowLink {
    private(set) weak var flow: Flow?

    init(_ flow: Flow) {
        self.flow = flow
    }

    mutating func release() {}
}
