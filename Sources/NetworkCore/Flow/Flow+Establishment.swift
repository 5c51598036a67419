#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NetworkSystem
import NetworkDNS

/// Getting a flow to `ready`: an outbound flow's establishment run (resolution, the race, the
/// stack), an inbound flow's TLS or DTLS handshake, the connection timeout.
extension Flow {
    func establish() {
        if let unsupported = setup?.configuration.unsupported {
            perform(machine.establishmentFailed(unsupported, fatal: true))
            return
        }
        // An accepted flow: no setup (only outbound flows have one), its socket from the start.
        // (It is established once: it never waits, so `establish` does not come again.)
        if setup == nil, case .owned(let channel) = transport {
            establishAccepted(channel)
            return
        }
        if case .shared = transport {
            establishSharedDatagramPeer()
            return
        }
        if let parent = setup?.configuration.quicStreamParent {
            establishQUICStream(of: parent)
            return
        }
        guard let configuration = setup?.configuration else {
            // Only outbound flows get here, and they keep their setup until ready.
            perform(machine.establishmentFailed(.posix(EINVAL), fatal: true))
            return
        }
        let attempt = Establishment(flow: self, configuration: configuration)
        establishment = attempt
        setup?.framerFailure = nil
        if configuration.tcp.connectionTimeout > 0, let setup {
            setup.establishmentTimeout?.cancel()
            // (Strong: the attempt holds the flow anyway, and the timer is cancelled when the
            // attempt ends. A weak capture would give the flow a side table for good, which
            // slows every retain and release of it.)
            setup.establishmentTimeout = eventLoop.scheduleTask(
                in: .seconds(Int64(configuration.tcp.connectionTimeout))
            ) { [self] in
                establishmentTimedOut(attempt)
            }
        }
        report.attemptCount += 1
        attempt.run()
    }

    /// An accepted TCP connection is ready at once, or after its TLS handshake.
    private func establishAccepted(_ channel: Channel) {
        report.recordAccepted()
        switch serverSecurity {
        case .gnuTLS(let handler, let timeout):
            serverSecurity = nil
            let started = NIODeadline.now()
            let timer = inboundHandshakeTimer(timeout, startedAt: started)
            handler.handshakeFuture.whenComplete { result in
                timer.cancel()
                self.inboundHandshakeFinished(result.mapError { FlowError($0) }, startedAt: started)
            }
        case .tls(let handler, let timeout):
            serverSecurity = nil
            let started = NIODeadline.now()
            let timer = inboundHandshakeTimer(timeout, startedAt: started)
            TLSStack.waitForServerHandshake(handler, on: channel).whenComplete { result in
                timer.cancel()
                self.inboundHandshakeFinished(
                    result.mapError { FlowError(tls: $0, verifyBlock: false) }, startedAt: started)
            }
        case nil:
            guard inboundLayers.isEmpty else {
                startInboundLayers()
                return
            }
            acceptedFlowReady()
        }
    }

    /// An accepted flow with nothing left to set up is ready, and fails at once if its peer reset
    /// the connection before it was started.
    private func acceptedFlowReady() {
        perform(machine.establishmentSucceeded())
        if let error = receives.terminalError { perform(machine.transportFailed(error)) }
    }

    /// An accepted flow's framers (and WebSocket upgrade) start once everything below them is
    /// up; the flow is ready when they all are, and fails with the first one's error.
    private func startInboundLayers() {
        let layers = inboundLayers
        inboundLayers = []
        let framers = layers.compactMap { $0 as? FramerHost }
        EventLoopFuture.whenAllSucceed(layers.map { $0.startLayer() }, on: eventLoop).whenComplete { result in
            guard self.machine.state == .preparing else { return }
            switch result {
            case .success(let facts):
                if let webSocket = facts.lazy.compactMap(\.webSocket).first {
                    self.sessionFacts = StackSessionBox(tls: self.sessionFacts?.tls, webSocket: webSocket)
                }
                if self.startTLSAboveFramers(framers) { return }
                self.acceptedFlowReady()
            case .failure(let error):
                self.perform(self.machine.establishmentFailed(FlowError(error), fatal: true))
                self.perform([.closeTransport(abortive: false)])
            }
        }
    }

    /// Starts the TLS the top framer of an accepted flow prepended (`hosts` bottom first), if
    /// any, above that framer; the flow is ready once its handshake is done, as with TLS over
    /// TCP. False when there is none.
    private func startTLSAboveFramers(_ hosts: [FramerHost]) -> Bool {
        let tls: FlowTLSConfiguration?
        do {
            tls = try TLSAboveFramer.prepended(by: hosts)
        } catch {
            perform(machine.establishmentFailed(error, fatal: true))
            perform([.closeTransport(abortive: false)])
            return true
        }
        guard let tls else { return false }
        guard let top = hosts.last?.link as? FramerHandler, case .owned(let channel) = transport,
            let flowHandler = try? channel.pipeline.syncOperations.handler(type: FlowChannelHandler<FramedMessage, WeakFlowLink>.self)
        else {
            // TLS was asked for and cannot run here: fail rather than go on in plaintext.
            perform(machine.establishmentFailed(.posix(EOPNOTSUPP), fatal: true))
            perform([.closeTransport(abortive: false)])
            return true
        }
        NetworkLog.tls.debug("handshake above framer \(top.host.label) (inbound)", metadata: logMetadata)
        // (A stream from now on, before any decrypted byte can come up.)
        carryStreamAboveFramers()
        let started = NIODeadline.now()
        let timer = inboundHandshakeTimer(FlowServerSecurity.defaultHandshakeTimeout, startedAt: started)
        TLSAboveFramer.startServer(on: channel, top: top, flowHandler: flowHandler, settings: tls).whenComplete { result in
            timer.cancel()
            self.inboundHandshakeFinished(result.mapError { FlowError(tls: $0, verifyBlock: false) }, startedAt: started)
        }
        return true
    }

    /// A datagram listener's peer is ready at once, or after its DTLS handshake.
    private func establishSharedDatagramPeer() {
        guard case .shared(let peer) = transport, let session = peer.dtls else {
            guard inboundLayers.isEmpty else {
                startInboundLayers()
                return
            }
            perform(machine.establishmentSucceeded())
            return
        }
        let started = NIODeadline.now()
        session.startHandshake { result in
            if self.inboundHandshakeFinished(result, startedAt: started) {
                // Messages that came right behind the handshake.
                self.deliverPeerMessages(session.receive(nil))
            }
        }
    }

    /// Fails an inbound TLS handshake that is still running after `timeout` with ETIMEDOUT: a
    /// peer that stalls mid-handshake (or never starts one) must not hold its socket for good.
    private func inboundHandshakeTimer(_ timeout: TimeAmount, startedAt started: NIODeadline) -> Scheduled<Void> {
        eventLoop.scheduleTask(in: timeout) { [weak self] in
            guard let self else { return }
            NetworkLog.tls.debug("inbound handshake timed out", metadata: logMetadata)
            inboundHandshakeFinished(.failure(.posix(ETIMEDOUT)), startedAt: started)
        }
    }

    /// An inbound flow's TLS or DTLS handshake ended: ready with what it negotiated, or failed
    /// for good (a handshake is not retried). Returns whether it succeeded. Only the first
    /// outcome counts (a timed-out handshake's future fails again when its socket closes).
    @discardableResult
    private func inboundHandshakeFinished(_ result: Result<TLSSessionFacts, FlowError>, startedAt started: NIODeadline) -> Bool {
        guard machine.state == .preparing else { return false }
        switch result {
        case .success(let facts):
            NetworkLog.tls.debug("handshake complete (inbound)", metadata: logMetadata.merging(facts.logMetadata) { a, _ in a })
            sessionFacts = StackSessionBox(tls: facts)
            report.tlsHandshakeDuration = .now() - started
            if !inboundLayers.isEmpty {
                startInboundLayers()
                return true
            }
            perform(machine.establishmentSucceeded())
            return true
        case .failure(let error):
            NetworkLog.tls.debug("handshake failed (inbound): \(error.logDescription)", metadata: logMetadata)
            perform(machine.establishmentFailed(error, fatal: true))
            perform([.closeTransport(abortive: false)])
            return false
        }
    }

    private func establishmentTimedOut(_ attempt: Establishment) {
        guard establishment === attempt else { return }
        NetworkLog.connection.debug("connection timeout expired during establishment", metadata: logMetadata)
        stopEstablishment()
        // Every option was tried for as long as allowed: wait for a change (or `restart()`),
        // as when every address refused, rather than give up for good.
        perform(machine.establishmentFailed(.posix(ETIMEDOUT)))
    }

    func stopEstablishment() {
        cancelEstablishmentTimeout()
        establishment?.abandon()
        establishment = nil
    }

    private func cancelEstablishmentTimeout() {
        setup?.establishmentTimeout?.cancel()
        setup?.establishmentTimeout = nil
    }

    /// The idempotent sends (no completion) at the head of the queue, joined: the data Fast Open
    /// may carry in each attempt's SYN, or QUIC in its 0-RTT packets. Called by `Establishment`
    /// on the loop; nil when there is none or the flow is neither TCP nor a QUIC stream.
    func fastOpenData() -> (data: ByteBuffer, sends: Int)? {
        guard transportKind == .tcp || transportKind == .quic, receives.mode == .stream else { return nil }
        return sendPath.fastOpenData()
    }

    /// Called by `Establishment` on the loop.
    func establishmentFinished(_ attempt: Establishment, result: Result<Channel, FlowError>) {
        guard establishment === attempt else {
            if case .success(let channel) = result { channel.close(promise: nil) }
            return
        }
        establishment = nil
        cancelEstablishmentTimeout()
        record(attempt, result: result)
        switch result {
        case .success(let channel):
            transport = .owned(channel)
            if isFramed && StreamAboveFramers.isInstalled(on: channel) {
                carryStreamAboveFramers()
            } else if isFramed {
                messageLayer = try? channel.pipeline.syncOperations.handler(
                    type: FlowChannelHandler<FramedMessage, OwningFlowLink>.self
                ).messageLayer
            }
            // (Only a TCP socket carries the stream's bytes as they are: QUIC's are packets.)
            if EngineTuning.directIO, transportKind == .tcp, let descriptor = attempt.winnerDescriptor, channel.isActive,
                let socket = DirectSocket(duplicating: descriptor)
            {
                // (Active, on its loop: NIO has not closed the descriptor, so the number is still
                // this socket's.)
                mailbox.setDirectSocket(socket)
                directSocketAttached = true
            }
            if EngineTuning.directIO, transportKind == .udp, !isFramed, let descriptor = attempt.winnerDescriptor,
                channel.isActive
            {
                attachDatagramWriter(descriptor: descriptor)
            }
            // The winner already wrote the Fast Open data (in its SYN, or right after connecting).
            for sent in sendPath.takeFirst(attempt.fastOpenSends) {
                report.sentBytes += UInt64(sent.byteCount)
                finish(sent, nil)
            }
            perform(machine.establishmentSucceeded())
            if !machine.isReady {
                // Cancelled in the meantime.
                channel.close(promise: nil)
            }
        case .failure(let error):
            if let framerFailure = setup?.framerFailure {
                perform(machine.establishmentFailed(framerFailure, fatal: true))
                return
            }
            perform(machine.establishmentFailed(error))
        }
    }

    /// What the establishment report keeps of a finished run.
    private func record(_ attempt: Establishment, result: Result<Channel, FlowError>) {
        report.resolution = attempt.resolutionReport
        if attempt.proxyConfigured {
            report.proxy = ProxyReport(configured: true, endpoint: attempt.proxyUsed?.server)
        }
        if report.resolution == nil, case .success(let channel) = result, channel.remoteAddress == nil,
            let peer = attempt.winnerAddress
        {
            // A Fast Open connect to an address: NIO never learnt the peer, so keep it here
            // (as a literal "resolution", which reports leave out).
            report.resolution = ResolutionReport(
                duration: .zero, endpointCount: 1, successful: peer, preferred: peer, fromLiteral: true)
        }
        report.handshakeDuration = attempt.handshakeDuration
        report.attemptStartTime = attempt.winnerStartTime
        report.tlsHandshakeDuration = attempt.tlsHandshakeDuration
        if attempt.tlsFacts != nil || attempt.webSocketFacts != nil {
            sessionFacts = StackSessionBox(tls: attempt.tlsFacts, webSocket: attempt.webSocketFacts)
        }
    }

    // MARK: - Waiting

    /// A waiting flow tries again when the network changes (a link comes up, a route or an
    /// address appears) into a path it may use, as Apple's waiting connections do. Only waiting
    /// flows subscribe, so established ones pay nothing for it.
    func watchPathWhileWaiting() {
        guard let box = setup, box.pathWatch == nil else { return }
        let requirements = box.configuration.pathRequirements
        box.pathWatch = PathSubscription { [weak self] inputs in
            let facts = PathEvaluator.evaluate(inputs, requirements)
            guard let self else { return }
            self.eventLoop.execute { self.pathSnapshot(facts) }
        }
    }

    private func pathSnapshot(_ facts: PathFacts) {
        guard let box = setup, box.pathWatch != nil else { return }
        guard let baseline = box.pathBaseline else {
            box.pathBaseline = facts
            return
        }
        guard facts != baseline else { return }
        box.pathBaseline = facts
        NetworkLog.connection.debug(
            "path changed while waiting (\(facts.status == .satisfied ? "satisfied: trying again" : "unsatisfied"))",
            metadata: logMetadata)
        perform(machine.pathChanged(satisfied: facts.status == .satisfied))
    }
}
