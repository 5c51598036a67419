#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// TLS over TCP run by GnuTLS, between the socket and the flow's handler: used for pre-shared-key
/// sessions, whose suites (TLS_PSK_WITH_AES_128_GCM_SHA256 and the others Apple's peer-to-peer
/// samples ask for) BoringSSL does not have. Client or server; the handshake starts as soon as
/// the handler is in the pipeline (a server's first bytes are then never missed).
final class GnuTLSStreamHandler: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let role: GnuTLSSession.Role
    private let settings: FlowTLSConfiguration
    private let handshake: EventLoopPromise<TLSSessionFacts>
    private var session: GnuTLSSession?
    private var established = false

    /// Completes when the handshake (and the peer's verification) is done.
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
                role: role, settings: settings, eventLoop: context.eventLoop, stream: true,
                write: { bytes, promise in bound.value.write(NIOAny(bytes), promise: promise) },
                flush: { bound.value.flush() })
            self.session = session
            session.startHandshake { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let facts):
                    self.established = true
                    self.handshake.succeed(facts)
                    self.deliver(session.receive(nil), context: bound.value)
                case .failure(let error):
                    self.handshake.fail(error)
                    bound.value.close(promise: nil)
                }
            }
            // Reads are on demand; during the handshake nobody else asks for them.
            if context.channel.isActive { context.read() }
        } catch {
            handshake.fail(error)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        handshake.fail(FlowError.posix(ECANCELED))
    }

    func channelActive(context: ChannelHandlerContext) {
        if !established { context.read() }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session else { return }
        deliver(session.receive(Self.unwrapInboundIn(data)), context: context)
    }

    private func deliver(_ received: (messages: [ByteBuffer], end: GnuTLSSession.End?), context: ChannelHandlerContext) {
        for message in received.messages { context.fireChannelRead(Self.wrapInboundOut(message)) }
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
        if let event = event as? ChannelEvent, event == .inputClosed, let session {
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
        if !established {
            handshake.fail(FlowError(error))
            context.close(promise: nil)
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
