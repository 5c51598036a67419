import NIOCore

/// Sits right under the flow's handler when a byte-stream protocol (TLS a framer prepended) runs
/// above the framers: the flow's handler was made for the framers' messages, so the protocol's
/// bytes reach it as messages without metadata, and the flow, told by this handler's presence,
/// reads them as a stream (`Flow.carryStreamAboveFramers`).
final class StreamAboveFramers: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = FramedMessage

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(wrapInboundOut(FramedMessage(bytes: unwrapInboundIn(data), metadata: nil)))
    }

    /// Whether `channel`'s stack has a byte stream above its framers.
    static func isInstalled(on channel: Channel) -> Bool {
        (try? channel.pipeline.syncOperations.handler(type: StreamAboveFramers.self)) != nil
    }
}
