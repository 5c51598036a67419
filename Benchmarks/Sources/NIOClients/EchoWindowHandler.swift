// The message scenarios' client loop on plain SwiftNIO (framed, ws): a window of messages in
// flight, each echo making the next one go.
import BenchSupport
import NIOCore

/// Keeps `window` messages in flight: `kick` writes the first ones; each echo that `isEcho`
/// accepts makes the next go, written in `channelRead` and flushed in `channelReadComplete`
/// (NIO's idiom for pipelined protocols), or flushed at once (`flushesPerRead` false).
final class EchoWindowHandler<Message>: ChannelInboundHandler {
    typealias InboundIn = Message
    typealias OutboundOut = Message

    private let window: Int
    private let flushesPerRead: Bool
    private let make: () -> Message
    private let isEcho: (Message) -> Bool
    private var control: RunControl?
    private var needsFlush = false

    init(window: Int, flushesPerRead: Bool = true, make: @escaping () -> Message, isEcho: @escaping (Message) -> Bool) {
        self.window = window
        self.flushesPerRead = flushesPerRead
        self.make = make
        self.isEcho = isEcho
    }

    func kick(_ control: RunControl, context: ChannelHandlerContext) {
        self.control = control
        for _ in 0..<window { context.write(wrapOutboundOut(make()), promise: nil) }
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let control else { return }
        guard isEcho(unwrapInboundIn(data)) else {
            control.error()
            return
        }
        if control.completed() {
            if flushesPerRead {
                context.write(wrapOutboundOut(make()), promise: nil)
                needsFlush = true
            } else {
                context.writeAndFlush(wrapOutboundOut(make()), promise: nil)
            }
        } else {
            self.control = nil
            control.connectionStopped()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        control?.error()
        context.close(promise: nil)
    }

    /// Kicks the handler of this type in `channel`'s pipeline, on its loop.
    static func kick(in channel: Channel, _ control: RunControl) {
        channel.eventLoop.execute {
            let handler = try! channel.pipeline.syncOperations.handler(type: Self.self)
            let context = try! channel.pipeline.syncOperations.context(handlerType: Self.self)
            handler.kick(control, context: context)
        }
    }
}
