#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// A QUIC connection group's flows: the group's own flow stands for the connection (its
/// configuration has `quic.multiplexed`), and each stream is a flow of its own, on a
/// `QUICStreamChannel`.
extension Flow {
    /// Hands each stream the peer opens, as a flow ready to start, to `taker` on the loop (those
    /// that came before first). Call once this group flow is ready.
    /// With `restacking`, each stream goes with that configuration's framers above it instead of
    /// the group's stack (`restackedPeerStream`); one that cannot be is reset.
    package func takeQUICPeerStreams(restacking: FlowConfiguration? = nil, _ taker: @escaping @Sendable (Flow) -> Void) {
        eventLoop.execute {
            self.quicMultiplexerOnLoop()?.takePeerStreams { flow in
                guard let restacking else { return taker(flow) }
                if let restacked = flow.restackedPeerStream(configuration: restacking) { taker(restacked) }
            }
        }
    }

    /// Readies a flow just adopted for a peer's `stream`: it carries the connection's session
    /// facts, and on a unidirectional stream (the peer's: this side only reads) its sending side
    /// is closed.
    func carryPeerStream(_ stream: QUICStreamChannel, sessionFacts: StackSessionBox?) {
        self.sessionFacts = sessionFacts
        if QUICStreamChannel.isUnidirectional(stream.streamID) { sendPath.closeWrite() }
    }

    /// On the loop: a flow on this flow's stream (a peer's, not started, and adopted without
    /// framers) with `configuration`'s framers above it, in place of this one, which lets the
    /// stream go. Nothing was read from the stream yet (a flow reads once started), so its
    /// bytes reach the framers. A stream that ended or failed meanwhile stays with this flow,
    /// which reports it; nil (the stream reset) when the new handlers cannot be added.
    func restackedPeerStream(configuration: FlowConfiguration) -> Flow? {
        guard case .owned(let channel) = transport, let stream = channel as? QUICStreamChannel, stream.isActive,
            machine.state == .setup, !isFramed
        else { return self }
        do {
            let pipeline = stream.pipeline.syncOperations
            typealias Handler = FlowChannelHandler<ByteBuffer, WeakFlowLink>
            _ = try pipeline.removeHandler(context: pipeline.context(handlerType: Handler.self))
            // (Gone at once: the handler is removable and does nothing asynchronous.)
            guard (try? pipeline.context(handlerType: Handler.self)) == nil else { throw FlowError.posix(EPROTO) }
            // (This flow no longer owns the stream: dropping it must not close it.)
            transport = .none
            let flow = try Flow.adopting(accepted: stream, configuration: configuration, transport: .quic)
            flow.carryPeerStream(stream, sessionFacts: sessionFacts)
            return flow
        } catch {
            stream.reset(applicationError: 0)
            return nil
        }
    }

    /// Whether this flow carries a unidirectional QUIC stream (a peer's: this side only
    /// reads). On the loop, once the flow has its stream (as `takeQUICPeerStreams` hands it).
    package var carriesUnidirectionalQUICStreamOnLoop: Bool {
        guard case .owned(let channel) = transport, let stream = channel as? QUICStreamChannel else { return false }
        return QUICStreamChannel.isUnidirectional(stream.streamID)
    }

    /// A flow for a new bidirectional stream of this group flow's connection, opened when the
    /// returned flow is started (once the peer allows another stream, if it must wait).
    package func makeQUICStreamFlow(configuration: FlowConfiguration) -> Flow {
        var configuration = configuration
        configuration.transport = .quic
        configuration.quicStreamParent = self
        return Flow(configuration: configuration, eventLoop: eventLoop)
    }

    /// Changes a QUIC connection's keep-alive (PINGs after `keepAlive` nanoseconds of silence;
    /// `.some(nil)` turns them off) and lets the peer open more streams at a time. From any
    /// thread; nothing for other flows.
    package func adjustQUIC(keepAlive: UInt64??, moreStreams: (bidirectional: Int, unidirectional: Int)?) {
        eventLoop.execute {
            guard let handler = self.quicHandlerOnLoop(), let binding = handler.binding else { return }
            if let keepAlive { binding.setKeepAlive(keepAlive) }
            if let moreStreams { binding.allowMoreStreams(bidirectional: moreStreams.bidirectional, unidirectional: moreStreams.unidirectional) }
            handler.driveNow()
        }
    }

    /// The connection's facts for the QUIC metadata; on the loop, nil for other flows.
    func quicFactsOnLoop() -> QUICConnectionFacts? {
        guard transportKind.isQUIC, let handler = quicHandlerOnLoop(), let binding = handler.binding else { return nil }
        // A flow on the connection's own channel carries the handler's one stream, unless it is
        // a group's or carries datagrams.
        let stream = quicStreamIDOnLoop ?? handler.bridgedStreamID
        return binding.facts(stream: stream)
    }

    /// The handler of the QUIC connection this flow carries, stands for, or is a stream of.
    private func quicHandlerOnLoop() -> QUICDatagramHandler? {
        guard case .owned(let channel) = transport else { return nil }
        let carrier = (channel as? QUICStreamChannel)?.parent ?? channel
        return try? carrier.pipeline.syncOperations.handler(type: QUICDatagramHandler.self)
    }

    /// Sets the application error codes a close sends: `stream` for a reset of this flow's
    /// stream (a group's stream, on `forceCancel`), `connection` (and its reason) for the close
    /// of the QUIC connection this flow carries or stands for (on `cancel`). From any thread.
    package func setQUICApplicationErrors(stream: UInt64?, connection: (code: UInt64, reason: String?)?) {
        eventLoop.execute {
            guard case .owned(let channel) = self.transport else { return }
            if let stream, let streamChannel = channel as? QUICStreamChannel { streamChannel.resetCode = stream }
            if let connection, let handler = self.quicHandlerOnLoop() {
                handler.closeError = connection
            }
        }
    }

    /// The stream this flow carries, when it is one of a connection group's; on the loop.
    var quicStreamIDOnLoop: Int64? {
        (transport.channel as? QUICStreamChannel)?.streamID
    }

    private func quicMultiplexerOnLoop() -> QUICStreamMultiplexer? {
        guard case .owned(let channel) = transport, !(channel is QUICStreamChannel) else { return nil }
        return quicHandlerOnLoop()?.multiplexer
    }

    /// The flow's handler on a stream this side opened, and the framers of its parameters
    /// under it (started once the stream is active); the future completes when every framer
    /// is ready (at once without framers).
    private func addStreamHandlers(to channel: QUICStreamChannel) throws -> EventLoopFuture<Void> {
        let pipeline = channel.pipeline.syncOperations
        guard isFramed, let framers = setup?.configuration.framers, !framers.isEmpty else {
            try pipeline.addHandler(FlowChannelHandler<ByteBuffer, OwningFlowLink>(flow: self))
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        let hosts = framers.reversed().map { FramerHost(factory: $0, eventLoop: channel.eventLoop) }
        let handlers = FramerHandler.stack(hosts)
        for handler in handlers { try pipeline.addHandler(handler) }
        let flowHandler = FlowChannelHandler<FramedMessage, OwningFlowLink>(flow: self)
        try pipeline.addHandler(flowHandler)
        if let top = handlers.last { flowHandler.join(top, channel: channel) }
        messageLayer = flowHandler.messageLayer
        return EventLoopFuture.andAllSucceed(hosts.map(\.readyFuture), on: channel.eventLoop)
    }

    /// `establish()` for a stream of a group: the group's connection opens it.
    func establishQUICStream(of parent: Flow) {
        guard let multiplexer = parent.quicMultiplexerOnLoop() else {
            // The group is not ready, or no longer.
            perform(machine.establishmentFailed(.posix(ENOTCONN), fatal: true))
            return
        }
        let bidirectional = !(setup?.configuration.quic.unidirectional ?? false)
        multiplexer.openStream(bidirectional: bidirectional) { result in
            switch result {
            case .success(let channel):
                guard self.machine.state == .preparing else {
                    // Cancelled while it waited for the peer to allow a stream.
                    channel.reset(applicationError: 0)
                    return
                }
                let framersReady: EventLoopFuture<Void>
                do {
                    framersReady = try self.addStreamHandlers(to: channel)
                } catch {
                    channel.reset(applicationError: 0)
                    self.perform(self.machine.establishmentFailed(FlowError(error), fatal: true))
                    return
                }
                self.transport = .owned(channel)
                self.sessionFacts = multiplexer.sessionFacts.map { StackSessionBox(tls: $0) }
                channel.activate()
                framersReady.whenComplete { result in
                    guard self.machine.state == .preparing else { return }
                    switch result {
                    case .success:
                        self.perform(self.machine.establishmentSucceeded())
                    case .failure(let error):
                        channel.reset(applicationError: 0)
                        self.perform(self.machine.establishmentFailed(FlowError(error), fatal: true))
                    }
                }
            case .failure(let error):
                self.perform(self.machine.establishmentFailed(error, fatal: true))
            }
        }
    }
}
