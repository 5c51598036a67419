import NIOCore

/// The last handler of a flow's pipeline where the flow cannot be it itself (see
/// `Flow+ChannelHandler`): a datagram channel's (other messages) or an accepted flow's (held
/// weakly). It hands every event on to the flow's own handler methods. How it holds the flow is
/// `Link`'s choice (`OwningFlowLink` for outbound flows, `WeakFlowLink` for accepted ones); it
/// lets go when NIO removes it as the channel closes.
final class FlowChannelHandler<Message: FlowInboundMessage, Link: FlowLink>: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = Message

    private var link: Link
    /// Datagrams are stamped with the time they were read (`shouldCalculateReceiveTime`).
    private let stampsReceiveTime: Bool
    /// The message layer right below (a framer, WebSocket), once joined (`join`): the flow
    /// writes its messages to it directly.
    private(set) var messageLayer: (any FlowMessageLayer)?

    init(flow: Flow, stampsReceiveTime: Bool = false) {
        self.link = Link(flow)
        self.stampsReceiveTime = stampsReceiveTime
    }

    private var flow: Flow? { link.flow }

    func handlerRemoved(context: ChannelHandlerContext) {
        messageLayer = nil
        link.release()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let flow else { return }
        let message = Self.unwrapInboundIn(data)
        if let framed = message as? FramedMessage {
            flow.transportReadMessage(framed, channel: context.channel)
            return
        }
        let metadata = message.datagramMetadata
        // (Several datagrams the kernel coalesced when it gives a segment size: `DatagramReceiveOffload`.)
        let datagrams = DatagramBatch(bytes: message.payload, segmentSize: metadata?.segmentSize)
        if let facts = ReceivedDatagramFacts.of(metadata, stamped: stampsReceiveTime) {
            // (The datagrams' ECN marking or receive time, for their IP metadata.)
            datagrams.forEachPacket { flow.transportReadMessage(FramedMessage(bytes: $0, metadata: facts), channel: context.channel) }
        } else {
            datagrams.forEachPacket { flow.transportRead($0, channel: context.channel) }
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        guard let flow else { return context.fireChannelActive() }
        flow.channelActive(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flow?.channelReadComplete(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let flow else { return context.fireUserInboundEventTriggered(event) }
        flow.userInboundEventTriggered(context: context, event: event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        flow?.channelInactive(context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        flow?.errorCaught(context: context, error: error)
    }
}

extension FlowChannelHandler: FramedMessageReceiver where Message == FramedMessage {
    func receive(framed message: FramedMessage, channel: Channel) {
        flow?.transportReadMessage(message, channel: channel)
    }

    /// Joins `layer`, added right below this handler with nothing between them (see
    /// `FlowMessageLayer`; measured: the boxing it saves was about 12 % of a framed-message
    /// client's retains and releases). A flow that already owns `channel` writes to the layer
    /// from now on; one that takes the channel later finds the layer here.
    func join(_ layer: any FlowMessageLayer, channel: Channel) {
        messageLayer = layer
        layer.deliverMessages(to: self)
        if let flow, flow.transport.channel === channel { flow.messageLayer = layer }
    }

    /// Another layer went in between (TLS a framer prepended): a flow that takes the channel
    /// later finds no layer here. (The flow itself lets go of its own in
    /// `Flow.carryStreamAboveFramers`.)
    func leaveMessageLayer() {
        messageLayer = nil
    }
}

/// What a flow's pipeline delivers: stream bytes or datagrams.
protocol FlowInboundMessage {
    var payload: ByteBuffer { get }
    /// What the socket said about a datagram (its ECN codepoint); nil for anything else.
    var datagramMetadata: AddressedEnvelope<ByteBuffer>.Metadata? { get }
}

extension FlowInboundMessage {
    var datagramMetadata: AddressedEnvelope<ByteBuffer>.Metadata? { nil }
}

extension ByteBuffer: FlowInboundMessage {
    var payload: ByteBuffer { self }
}

extension FramedMessage: FlowInboundMessage {
    var payload: ByteBuffer { bytes }
}

extension AddressedEnvelope: FlowInboundMessage where DataType == ByteBuffer {
    var payload: ByteBuffer { data }
    var datagramMetadata: AddressedEnvelope<ByteBuffer>.Metadata? { metadata }
}
