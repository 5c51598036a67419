#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NetworkDNS
import NIOCore
import NIOWebSocket

/// The WebSocket layer of a ready connection, between NIO's frame codec and the flow: a peer's
/// frames go up as whole messages with their `WebSocketMessageInfo`, the application's messages
/// go down as frames (each send one message; sends marked incomplete become fragments). It
/// answers pings (with `autoReplyPing`), calls pong handlers, runs the close handshake and ends
/// the connection with the right status code when the peer breaks a rule. The decisions are
/// the value types' (`WebSocketMessageAssembler`, `WebSocketCloseHandshake`,
/// `WebSocketPingTracker`); this class does their I/O. Everything runs on the channel's loop.
final class WebSocketMessageHandler: ChannelDuplexHandler, FlowMessageLayer, @unchecked Sendable {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = FramedMessage
    typealias OutboundIn = FramedMessage
    typealias OutboundOut = WebSocketFrame

    private let role: WebSocketRole
    private let autoReplyPing: Bool
    private var assembler: WebSocketMessageAssembler
    private var closing = WebSocketCloseHandshake()
    private var pings = WebSocketPingTracker<@Sendable (FlowError?) -> Void>()
    /// The kind of the data message whose fragments the application is sending, if any.
    private var sendingFragmentsOf: WebSocketMessageKind?
    /// A client's masking keys, one per frame it sends.
    private var maskingKeys = WebSocketMaskingKeys()
    /// Frames that arrived with the upgrade's response, before the flow took the connection
    /// (nil once handled): nothing may be written while the HTTP codec is still leaving the
    /// pipeline, and the flow takes messages only once it owns the channel. They are handled at
    /// the flow's first read after `release`.
    private var held: [WebSocketFrame]?
    /// A decoder error among the held frames (it comes after them).
    private var heldFailure: WebSocketFailure?
    private var released = false
    private var context: ChannelHandlerContext?
    /// The flow's handler, once joined (`FlowMessageLayer`): messages go to it directly.
    private var receiver: (any FramedMessageReceiver)?

    /// `held`: frames wait for `release()` and a read (right after an upgrade).
    init(role: WebSocketRole, configuration: WebSocketConfiguration, held: Bool = false) {
        self.held = held ? [] : nil
        self.role = role
        self.autoReplyPing = configuration.autoReplyPing
        self.assembler = WebSocketMessageAssembler(role: role, maximumMessageSize: configuration.maximumMessageSize)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    // MARK: - Inbound

    /// A message for the flow: straight to its handler once joined, else up the pipeline.
    private func up(_ message: FramedMessage, context: ChannelHandlerContext) {
        if let receiver {
            receiver.receive(framed: message, channel: context.channel)
        } else {
            context.fireChannelRead(Self.wrapInboundOut(message))
        }
    }

    /// The HTTP codec is gone: frames that waited are handled at the flow's first read.
    func release() {
        released = true
    }

    func read(context: ChannelHandlerContext) {
        if released, let frames = held {
            held = nil
            for frame in frames { handle(frame, context: context) }
            if let heldFailure { fail(heldFailure, context: context) }
        }
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let incoming = Self.unwrapInboundIn(data)
        if held != nil {
            held?.append(incoming)
            return
        }
        handle(incoming, context: context)
    }

    private func handle(_ incoming: WebSocketFrame, context: ChannelHandlerContext) {
        let action = assembler.frameReceived(
            .init(
                fin: incoming.fin, opcode: UInt8(webSocketOpcode: incoming.opcode), reservedBits: !incoming.reservedBits.isEmpty,
                masked: incoming.maskKey != nil, payload: WebSocketMasking.unmaskedData(of: incoming)))
        switch action {
        case .none:
            break
        case .message(let kind, let bytes):
            up(FramedMessage(bytes: bytes, metadata: WebSocketMessageInfo.plain(kind)), context: context)
        case .ping(let payload):
            NetworkLog.connection.trace("websocket: ping of \(payload.readableBytes) bytes\(autoReplyPing ? ", answered" : "")")
            if autoReplyPing {
                guard closing.canSend else { return }
                context.writeAndFlush(Self.wrapOutboundOut(frame(.pong, payload, fin: true, context: context)), promise: nil)
            } else {
                up(FramedMessage(bytes: payload, metadata: WebSocketMessageInfo(kind: .ping)), context: context)
            }
        case .pong(let payload):
            let answered = pings.pongReceived(payload: payload)
            NetworkLog.connection.trace("websocket: pong answering \(answered.count) ping(s)")
            if answered.isEmpty { NetworkLog.connection.trace("websocket: unsolicited pong ignored") }
            for handler in answered { handler(nil) }
        case .close(let payload):
            NetworkLog.connection.debug("websocket: peer closed with \(payload.code.map(String.init) ?? "no code")")
            up(FramedMessage(bytes: payload.reason, metadata: WebSocketMessageInfo(kind: .close, closeCode: payload.code ?? 1005)), context: context)
            perform(closing.peerClosed(payload), context: context)
        case .fail(let failure):
            fail(failure, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The frame decoder's errors: a frame over the size bound, a malformed control frame.
        if let error = error as? NIOWebSocketError {
            let failure: WebSocketFailure = error == .invalidFrameLength ? .messageTooBig : .protocolError
            // Nothing may be written yet while frames are held (see `held`).
            if held != nil {
                heldFailure = heldFailure ?? failure
            } else {
                fail(failure, context: context)
            }
            return
        }
        context.fireErrorCaught(error)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Reads are the flow's to ask for, except while a ping waits for its pong.
        if pings.count > 0 { context.read() }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        for handler in pings.takeAll() { handler(.posix(ECONNRESET)) }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        for handler in pings.takeAll() { handler(.posix(ECANCELED)) }
        self.context = nil
        receiver = nil
    }

    // MARK: - FlowMessageLayer

    func send(_ message: FramedMessage, promise: EventLoopPromise<Void>?) {
        guard let context else {
            (message.metadata as? WebSocketMessageInfo)?.pongHandler?(.posix(ENOTCONN))
            promise?.fail(FlowError.posix(ENOTCONN))
            return
        }
        write(message, context: context, promise: promise)
    }

    func deliverMessages(to receiver: any FramedMessageReceiver) {
        self.receiver = receiver
    }

    // MARK: - Outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        write(Self.unwrapOutboundIn(data), context: context, promise: promise)
    }

    private func write(_ message: FramedMessage, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        let info = message.metadata as? WebSocketMessageInfo
        // Without WebSocket metadata a message is binary.
        let kind = info?.kind ?? sendingFragmentsOf ?? .binary
        guard closing.canSend else {
            // After our close, or the handshake's end, nothing more goes out; a close sent in
            // answer to the peer's (already answered) is not an error.
            if kind == .close { return promise?.succeed() ?? () }
            info?.pongHandler?(.posix(ENOTCONN))
            promise?.fail(FlowError.posix(ENOTCONN))
            return
        }
        switch kind {
        case .close:
            let payload = WebSocketClosePayload(code: info?.closeCode ?? 1000, reason: message.bytes)
            perform(closing.closeRequested(payload), context: context, promise: promise)
        case .ping, .pong:
            guard message.bytes.readableBytes <= 125 else {
                info?.pongHandler?(.posix(EMSGSIZE))
                promise?.fail(FlowError.posix(EMSGSIZE))
                return
            }
            context.write(Self.wrapOutboundOut(frame(kind, message.bytes, fin: true, context: context)), promise: promise)
            if kind == .ping, let handler = info?.pongHandler {
                pings.pingSent(payload: message.bytes, handler: handler)
                // The pong must be read even when the application has no receive pending.
                context.read()
            }
        case .text, .binary, .continuation:
            // The first part of a message carries its kind; the parts after it are continuations.
            let opcode: WebSocketMessageKind = sendingFragmentsOf == nil ? (kind == .continuation ? .binary : kind) : .continuation
            if sendingFragmentsOf == nil { sendingFragmentsOf = opcode }
            if message.isComplete { sendingFragmentsOf = nil }
            context.write(Self.wrapOutboundOut(frame(opcode, message.bytes, fin: message.isComplete, context: context)), promise: promise)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Cancelling (or ending our side) closes the WebSocket first, when it is still open.
        if mode != .input, context.channel.isActive, closing.canSend {
            let actions = closing.closeRequested(WebSocketClosePayload(code: 1000))
            if let payload = actions.send {
                context.writeAndFlush(Self.wrapOutboundOut(frame(.close, payload.encoded(), fin: true, context: context)), promise: nil)
            }
        }
        context.close(mode: mode, promise: promise)
    }

    // MARK: - Inside

    private func frame(_ kind: WebSocketMessageKind, _ bytes: ByteBuffer, fin: Bool, context: ChannelHandlerContext) -> WebSocketFrame {
        WebSocketFrame(
            fin: fin, opcode: WebSocketOpcode(encodedWebSocketOpcode: kind.rawValue) ?? .binary,
            maskKey: role == .client ? maskingKeys.take() : nil, data: bytes)
    }

    private func perform(_ actions: WebSocketCloseHandshake.Actions, context: ChannelHandlerContext, promise: EventLoopPromise<Void>? = nil) {
        if let payload = actions.send {
            context.writeAndFlush(
                Self.wrapOutboundOut(frame(.close, payload.encoded(allocator: context.channel.allocator), fin: true, context: context)),
                promise: promise)
        } else {
            promise?.succeed()
        }
        if actions.closeTransport {
            // The peer sends nothing after its close frame: the application's receives end.
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            context.close(promise: nil)
        }
    }

    private func fail(_ failure: WebSocketFailure, context: ChannelHandlerContext) {
        NetworkLog.connection.debug("websocket: closing with \(failure.closeCode): \(failure)")
        let actions = closing.failed(failure)
        if let payload = actions.send {
            context.writeAndFlush(Self.wrapOutboundOut(frame(.close, payload.encoded(), fin: true, context: context)), promise: nil)
        }
        context.fireErrorCaught(failure.flowError)
        context.close(promise: nil)
    }
}
