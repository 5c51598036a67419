import NIOCore

/// Where a `FlowMessageLayer` hands its messages: the flow's handler, called directly.
protocol FramedMessageReceiver: AnyObject {
    func receive(framed message: FramedMessage, channel: Channel)
}
