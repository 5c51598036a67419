import NIOCore

/// Sits right above a framer that a byte-stream protocol runs over (TLS the framer prepended):
/// that protocol writes bytes, the framer takes messages, so each write goes down as a message
/// without metadata, as another framer's writes do.
final class FramerStreamWriter: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = FramedMessage

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(wrapOutboundOut(FramedMessage(bytes: unwrapOutboundIn(data), metadata: nil)), promise: promise)
    }
}
