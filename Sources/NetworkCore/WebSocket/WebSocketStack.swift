import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Puts the WebSocket layer into a connection's pipeline, right under the flow's handler: the
/// HTTP codec and a handshake handler first (or the frame codec at once with `skipHandshake`),
/// then, once the upgrade is done, NIO's frame codec and `WebSocketMessageHandler`.
enum WebSocketStack {
    /// An outbound connection's layer, over everything below it; the future succeeds when the
    /// server accepted the upgrade.
    static func startClient(
        on channel: Channel, before flowHandler: ChannelHandler, configuration: WebSocketConfiguration, host: String
    ) -> EventLoopFuture<WebSocketHandshakeFacts> {
        do {
            let pipeline = channel.pipeline.syncOperations
            if configuration.skipHandshake {
                try addFrameHandlers(pipeline, position: .before(flowHandler), role: .client, configuration: configuration)
                return channel.eventLoop.makeSucceededFuture(WebSocketHandshakeFacts(subprotocol: nil, headers: []))
            }
            let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
            let encoder = HTTPRequestEncoder()
            // Encoder below the decoder: the response decoder sees the requests go out.
            try pipeline.addHandler(encoder, position: .before(flowHandler))
            try pipeline.addHandler(decoder, position: .before(flowHandler))
            let handshake = WebSocketClientHandshake(
                configuration: configuration, host: host, codec: (decoder, encoder), eventLoop: channel.eventLoop)
            try pipeline.addHandler(handshake, position: .before(flowHandler))
            return handshake.done.futureResult
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    /// A listener connection's layer, added when the connection is accepted; it starts with the
    /// connection (`InboundStackLayer.start`).
    static func addServer(
        to channel: Channel, configuration: WebSocketConfiguration, handshakeTimeout: TimeAmount
    ) throws -> any InboundStackLayer {
        let pipeline = channel.pipeline.syncOperations
        if configuration.skipHandshake {
            try addFrameHandlers(pipeline, position: .last, role: .server, configuration: configuration)
            return ReadyStackLayer(eventLoop: channel.eventLoop)
        }
        let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
        let encoder = HTTPResponseEncoder()
        try pipeline.addHandler(encoder)
        try pipeline.addHandler(decoder)
        let handshake = WebSocketServerHandshake(
            configuration: configuration, codec: (decoder, encoder), timeout: handshakeTimeout, eventLoop: channel.eventLoop)
        try pipeline.addHandler(handshake)
        return handshake
    }

    /// After a successful upgrade: the frame codec and the message handler take the handshake
    /// handler's place; the HTTP decoder goes last, handing the bytes that followed the
    /// handshake to the frame decoder.
    /// The future succeeds once the HTTP codec is out of the pipeline: only then may anything
    /// be written (frames would otherwise pass through the HTTP decoder's outbound side), so the
    /// message handler holds what arrives until then, and the connection is ready then.
    static func switchToFrames(
        after handshake: ChannelHandler, context: ChannelHandlerContext, role: WebSocketRole, configuration: WebSocketConfiguration,
        httpCodec: (decoder: any RemovableChannelHandler, encoder: any RemovableChannelHandler)
    ) throws -> EventLoopFuture<Void> {
        let pipeline = context.pipeline.syncOperations
        let messages = try addFrameHandlers(pipeline, position: .after(handshake), role: role, configuration: configuration, held: true)
        let removed = context.eventLoop.makePromise(of: Void.self)
        pipeline.removeHandler(context: context, promise: nil)
        pipeline.removeHandler(httpCodec.encoder, promise: nil)
        pipeline.removeHandler(httpCodec.decoder, promise: removed)
        return removed.futureResult.map { messages.release() }
    }

    @discardableResult
    private static func addFrameHandlers(
        _ pipeline: ChannelPipeline.SynchronousOperations, position: ChannelPipeline.SynchronousOperations.Position, role: WebSocketRole,
        configuration: WebSocketConfiguration, held: Bool = false
    ) throws -> WebSocketMessageHandler {
        // A single frame may be as large as a whole message; a larger one fails in the decoder
        // before its body is buffered.
        let maxFrameSize = min(max(configuration.maximumMessageSize, 125), Int(UInt32.max))
        // Added in reverse at `position`, so they end up decoder, encoder, message handler.
        let messages = WebSocketMessageHandler(role: role, configuration: configuration, held: held)
        let handlers: [ChannelHandler] = [
            // (A client's frames are masked: our encoder masks a word at a time, NIO's a byte.)
            ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maxFrameSize)),
            role == .client ? WebSocketClientFrameEncoder() as ChannelHandler : WebSocketFrameEncoder(), messages,
        ]
        switch position {
        case .after:
            for handler in handlers.reversed() { try pipeline.addHandler(handler, position: position) }
        default:
            for handler in handlers { try pipeline.addHandler(handler, position: position) }
        }
        // The message handler is the top of the stack, right under the flow's handler (if the
        // flow's handler is there already: a server's comes right after): join them.
        if let channel = try? pipeline.context(handler: messages).channel {
            if let flowHandler = try? pipeline.handler(type: FlowChannelHandler<FramedMessage, OwningFlowLink>.self) {
                flowHandler.join(messages, channel: channel)
            } else if let flowHandler = try? pipeline.handler(type: FlowChannelHandler<FramedMessage, WeakFlowLink>.self) {
                flowHandler.join(messages, channel: channel)
            }
        }
        return messages
    }
}
