#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// DTLS between a connected datagram channel and the flow's handler: datagrams below are
/// ciphertext, datagrams above are the application's messages (one record each).
final class DTLSClientHandler: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias InboundOut = AddressedEnvelope<ByteBuffer>
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let settings: FlowTLSConfiguration
    private let serverName: String?
    private let handshake: EventLoopPromise<TLSSessionFacts>
    private var session: GnuTLSSession?
    private var established = false

    init(settings: FlowTLSConfiguration, serverName: String?, handshake: EventLoopPromise<TLSSessionFacts>) {
        self.settings = settings
        self.serverName = serverName
        self.handshake = handshake
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        do {
            let session = try GnuTLSSession(
                role: .client(serverName: serverName), settings: settings, eventLoop: context.eventLoop,
                write: { datagram, promise in
                    bound.value.write(NIOAny(datagram), promise: promise)
                },
                flush: { bound.value.flush() })
            self.session = session
            session.startHandshake { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let facts):
                    self.established = true
                    self.handshake.succeed(facts)
                    // Messages that came with the last flight.
                    self.deliver(session.receive(nil), context: bound.value)
                case .failure(let error):
                    self.handshake.fail(error)
                }
            }
            // Reads are on demand; during the handshake nobody else asks for them.
            context.read()
        } catch {
            handshake.fail(error)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        session?.close()
        handshake.fail(FlowError.posix(ECANCELED))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session else { return }
        deliver(session.receive(Self.unwrapInboundIn(data).data), context: context)
    }

    private func deliver(_ received: (messages: [ByteBuffer], end: GnuTLSSession.End?), context: ChannelHandlerContext) {
        guard let remote = context.channel.remoteAddress else { return }
        for message in received.messages {
            context.fireChannelRead(Self.wrapInboundOut(AddressedEnvelope(remoteAddress: remote, data: message)))
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

    func channelReadComplete(context: ChannelHandlerContext) {
        if !established { context.read() }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !established {
            // For example ECONNREFUSED (ICMP port unreachable): this attempt is over.
            handshake.fail(FlowError(error))
            session?.close()
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
        // close_notify first, so the peer learns the session ended.
        session?.close()
        context.close(mode: mode, promise: promise)
    }
}
