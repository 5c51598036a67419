/// A strong link, for the channels of outbound flows. A weak one would cost every such flow a
/// weak-reference side table (48 bytes per connection, for its whole life). The cycle it makes
/// (flow, channel, pipeline, handler, flow) ends when the channel closes and NIO removes the
/// handler; until then the flow is alive anyway: a started outbound flow lives until it is
/// cancelled, and an attempt that loses its race is closed.
struct OwningFlowLink: FlowLink {
    private(set) var flow: Flow?

    init(_ flow: Flow) {
        self.flow = flow
    }

    mutating func release() {
        flow = nil
    }
}
