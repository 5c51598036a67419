#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// What a GnuTLS handler carries: bytes of a TCP stream, or datagrams of a connected UDP socket.
protocol GnuTLSFraming {
    /// TLS over a stream (true) or DTLS over datagrams (false).
    static var isStream: Bool { get }
    var payload: ByteBuffer { get }
    /// The plaintext `payload` as this kind of message, for the handler above.
    static func wrap(_ payload: ByteBuffer, context: ChannelHandlerContext) -> Self?
}

extension ByteBuffer: GnuTLSFraming {
    static var isStream: Bool { true }
    static func wrap(_ payload: ByteBuffer, context: ChannelHandlerContext) -> ByteBuffer? { payload }
}

extension AddressedEnvelope: GnuTLSFraming where DataType == ByteBuffer {
    static var isStream: Bool { false }
    static func wrap(_ payload: ByteBuffer, context: ChannelHandlerContext) -> AddressedEnvelope<ByteBuffer>? {
        context.channel.remoteAddress.map { AddressedEnvelope(remoteAddress: $0, data: payload) }
    }
}

/// GnuTLS between the socket and the flow's handler: DTLS on a connected datagram channel (one
/// record per message), or TLS on a TCP channel for the pre-shared-key sessions BoringSSL
/// cannot run (TLS_PSK_WITH_AES_128_GCM_SHA256 and the other suites Apple's peer-to-peer samples
/// ask for). The handshake starts as soon as the handler is in the pipeline, so a server's first
/// bytes are never missed; `handshakeFuture` completes once it and the peer's verification are
/// done.
final class GnuTLSHandler<Message: GnuTLSFraming>: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = Message
    typealias InboundOut = Message
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let role: GnuTLSSession.Role
    private let settings: FlowTLSConfiguration
    private let handshake: EventLoopPromise<TLSSessionFacts>
    private var session: GnuTLSSession?
    private var established = false

    var handshakeFuture: EventLoopFuture<TLSSessionFacts> { handshake.futureResult }

    init(role: GnuTLSSession.Role, settings: FlowTLSConfiguration, handshake: EventLoopPromise<TLSSessionFacts>) {
        self.role = role
        self.settings = settings
        self.handshake = handshake
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        do {
            let session = try GnuTLSSession(
                role: role, settings: settings, eventLoop: context.eventLoop, stream: Message.isStream,
                write: { bytes, promise in bound.value.write(NIOAny(bytes), promise: promise) },
                flush: { bound.value.flush() })
            self.session = session
            session.startHandshake { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let facts):
                    self.established = true
                    self.handshake.succeed(facts)
                    // Whatever came with the last flight.
                    self.deliver(session.receive(nil), context: bound.value)
                case .failure(let error):
                    self.handshake.fail(error)
                    if Message.isStream { bound.value.close(promise: nil) }
                }
            }
            // Reads are on demand; during the handshake nobody else asks for them.
            if context.channel.isActive { context.read() }
        } catch {
            handshake.fail(error)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if !Message.isStream { session?.close() }
        handshake.fail(FlowError.posix(ECANCELED))
    }

    func channelActive(context: ChannelHandlerContext) {
        if !established { context.read() }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session else { return }
        deliver(session.receive(Self.unwrapInboundIn(data).payload), context: context)
    }

    private func deliver(_ received: (messages: [ByteBuffer], end: GnuTLSSession.End?), context: ChannelHandlerContext) {
        for message in received.messages {
            if let wrapped = Message.wrap(message, context: context) { context.fireChannelRead(Self.wrapInboundOut(wrapped)) }
        }
        switch received.end {
        case nil:
            break
        case .closed:
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        case .failed(let error):
            context.fireErrorCaught(error)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if Message.isStream, let event = event as? ChannelEvent, event == .inputClosed, let session {
            guard established else {
                // The peer hung up in the middle of the handshake.
                handshake.fail(FlowError.tls(TLSStatus.closedAbort))
                context.close(promise: nil)
                return
            }
            // What TLS makes of the FIN: an orderly end after close_notify, else a truncation.
            deliver(session.receivedEndOfStream(), context: context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !established { context.read() }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard established else {
            // For example ECONNREFUSED (ICMP port unreachable): this attempt is over.
            handshake.fail(FlowError(error))
            if Message.isStream { context.close(promise: nil) } else { session?.close() }
            return
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshake.fail(FlowError.tls(TLSStatus.closedAbort))
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard let session else {
            promise?.fail(FlowError.posix(ENOTCONN))
            return
        }
        session.send(Self.unwrapOutboundIn(data), promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // close_notify first; a final message (output only) still reads the peer's answer.
        if mode == .output { session?.shutdownOutput() } else { session?.close() }
        context.close(mode: mode, promise: promise)
    }
}

/// TLS over TCP on GnuTLS.
typealias GnuTLSStreamHandler = GnuTLSHandler<ByteBuffer>
