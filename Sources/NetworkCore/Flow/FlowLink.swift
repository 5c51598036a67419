/// How a `FlowChannelHandler` holds its flow.
protocol FlowLink {
    init(_ flow: Flow)
    /// The flow, while the link still leads to it.
    var flow: Flow? { get }
    /// The handler left the pipeline: an owning link lets go of the flow.
    mutating func release()
}
