#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DequeModule
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NetworkDNS
import NetworkSystem
import Synchronization

/// One connection: its state machine, its transport channel, its inbound buffer and its pending
/// sends. A flow lives on one event loop and is touched only there; the public methods hop onto
/// that loop, so they may be called from any thread. Events go out through the handlers set in
/// `start`, called on the event loop in the order they happened.
package final class Flow: @unchecked Sendable {
    package typealias StateHandler = @Sendable (FlowConnectionState) -> Void
    package typealias ReceiveCompletion = @Sendable (ReceiveOutcome) -> Void
    /// Called with the send's error, if any, and a ticket through which the handler must run
    /// (see `SendCompletionTicket`).
    package typealias SendCompletion = @Sendable (FlowError?, SendCompletionTicket) -> Void

    /// How the flow reaches the network.
    private enum Transport {
        case none
        /// A socket the flow owns (outbound connections, accepted TCP children).
        case owned(Channel)
        /// A listener's datagram socket, shared with its other peers. Boxed: only listener flows
        /// have one, and inline it would make every flow's transport field three times larger.
        case shared(SharedDatagramPeer)

        var channel: Channel? {
            switch self {
            case .none: return nil
            case .owned(let channel): return channel
            case .shared(let peer): return peer.channel
            }
        }
    }

    private struct PendingSend: Sendable {
        var data: ByteBuffer?
        var isComplete: Bool
        var closesWrite: Bool
        /// Nil when nobody waits, or when the send already completed as it was taken.
        var completion: SendCompletion?
        /// Its bytes count in the send budget until the loop writes them.
        var counted = false
    }

    package let eventLoop: EventLoop
    /// TCP or UDP.
    package let transportKind: FlowTransportKind
    /// The flow's number in log lines (`C<n>`). Declared right here, it fills the padding after
    /// `transportKind` (one byte before an 8-byte-aligned field), so an idle connection pays
    /// nothing for it (measured: the instance stays 376 bytes).
    package let logID = LogIDs.nextConnection()
    // (Where an outbound flow goes lives in `setup` until it is ready; an inbound flow's peer
    // is its socket's. Not kept per flow: every connection pays for each stored byte.)
    /// The full configuration, needed only until the flow is established; boxed and released
    /// then, so an established flow does not carry ~240 bytes of socket settings around.
    private var setup: ConfigurationBox?

    private final class ConfigurationBox {
        let configuration: FlowConfiguration
        /// While waiting: the path-engine subscription, and the path it saw first (a retry
        /// comes on a change from it, not on the snapshot every subscription starts with).
        var pathWatch: Int?
        var pathBaseline: PathFacts?
        init(_ configuration: FlowConfiguration) { self.configuration = configuration }
    }

    /// Inbound bytes buffered per stream flow before reading pauses (backpressure).
    package static let streamHighWater = 512 * 1024
    /// Inbound datagrams buffered per datagram flow before reading pauses (or, on a shared
    /// listener socket, before further datagrams for that peer are dropped).
    package static let datagramHighWaterCount = 1024

    /// Operations from other threads wait here and are run by one event-loop task per batch,
    /// so a send and a receive issued together cost one hop, and everything one hop carries
    /// leaves in one flush.
    private enum Operation: Sendable {
        case send(PendingSend)
        case receive(minimum: Int, maximum: Int, completion: ReceiveCompletion)
        case other(@Sendable () -> Void)
    }

    private let inbox = Mutex(FlowInbox<Operation>())

    // Everything below is touched on `eventLoop` only.
    private var machine = FlowStateMachine()
    private var receives: ReceiveQueue<ReceiveCompletion>
    private var transport: Transport = .none
    private var queuedSends: Deque<PendingSend> = []
    private var partialDatagram: ByteBuffer?
    private var writeClosed = false
    private var batchDepth = 0
    private var needsFlush = false
    private var readInFlight = false
    private var stateHandler: StateHandler?
    private var establishment: Establishment?
    private var acceptedChannel: Channel?
    private var establishmentTimeout: Scheduled<Void>?
    package private(set) var report = FlowReport()
    /// The negotiated TLS session, boxed (most flows have none).
    private var tlsSession: TLSSessionBox?
    /// The security layer a listener set up for this flow: an accepted TLS connection's server
    /// handler (its handshake runs when the flow is started), or a DTLS peer's session. One
    /// optional field for both keeps idle flows small.
    private var serverSecurity: ServerSecurity?

    private enum ServerSecurity {
        case tls(NIOSSLServerHandler)
        case dtls(GnuTLSSession)
        /// TLS over TCP run by GnuTLS (pre-shared keys); its handshake began at adoption.
        case gnuTLS(GnuTLSStreamHandler)

        var dtls: GnuTLSSession? {
            if case .dtls(let session) = self { return session }
            return nil
        }
    }

    private final class TLSSessionBox {
        let facts: TLSSessionFacts
        init(_ facts: TLSSessionFacts) { self.facts = facts }
    }

    /// An outbound flow; nothing happens until `start`.
    package init(configuration: FlowConfiguration, eventLoop: EventLoop = Engine.nextEventLoop()) {
        self.transportKind = configuration.transport
        self.setup = ConfigurationBox(configuration)
        self.eventLoop = eventLoop
        self.receives = ReceiveQueue(mode: configuration.transport == .tcp ? .stream : .datagram)
    }

    private init(accepted channel: Channel, configuration: FlowConfiguration) {
        self.transportKind = .tcp
        self.eventLoop = channel.eventLoop
        self.receives = ReceiveQueue(mode: .stream)
        self.acceptedChannel = channel
        self.transport = .owned(channel)
    }

    /// A flow for a channel a listener accepted; it becomes ready as soon as it is started.
    /// Call on the channel's event loop: the flow's handler goes into the pipeline at once, so
    /// whatever NIO reads before the user starts the connection (data, a FIN) is kept for it.
    package static func adopting(
        accepted channel: Channel, configuration: FlowConfiguration, tls: (NIOSSLContext, FlowTLSConfiguration)? = nil,
        gnuTLS: FlowTLSConfiguration? = nil
    ) throws -> Flow {
        channel.eventLoop.preconditionInEventLoop()
        let flow = Flow(accepted: channel, configuration: configuration)
        if let settings = gnuTLS {
            let handler = GnuTLSStreamHandler(
                role: .server, settings: settings, handshake: channel.eventLoop.makePromise(of: TLSSessionFacts.self))
            try channel.pipeline.syncOperations.addHandler(handler, position: .first)
            flow.serverSecurity = .gnuTLS(handler)
        } else if let (context, settings) = tls {
            flow.serverSecurity = .tls(try TLSStack.addServerHandler(to: channel, context: context, settings: settings))
        }
        try channel.pipeline.syncOperations.addHandler(FlowChannelHandler<ByteBuffer>(flow: flow))
        return flow
    }

    /// A flow for one remote peer of a datagram listener; `release` is called once when the flow
    /// no longer uses the shared socket.
    init(
        sharedDatagramChannel channel: Channel,
        remote: SocketAddress,
        configuration: FlowConfiguration,
        dtls: GnuTLSSession? = nil,
        release: @escaping @Sendable () -> Void
    ) {
        self.transportKind = .udp
        self.eventLoop = channel.eventLoop
        self.receives = ReceiveQueue(mode: .datagram)
        self.transport = .shared(SharedDatagramPeer(channel: channel, remote: remote, release: release))
        self.serverSecurity = dtls.map { .dtls($0) }
    }

    deinit {
        if let token = setup?.pathWatch { PathMonitorEngine.shared.unsubscribe(token) }
        // A flow dropped without being started or cancelled must not leak its socket.
        if case .owned(let channel) = transport { channel.close(promise: nil) }
        if case .shared(let peer) = transport { peer.release() }
    }

    // MARK: - Public operations (any thread)

    /// Sets the receiver of every state change (including a `cancelled` that comes before
    /// `start`). Call it once, right after creating the flow, before handing the flow out.
    package func observe(_ stateHandler: @escaping StateHandler) {
        submit {
            guard self.machine.state != .cancelled else { return }
            self.stateHandler = stateHandler
        }
    }

    /// Starts establishment.
    package func start() {
        submit {
            guard case .setup = self.machine.state else { return }
            NetworkLog.connection.debug("start", metadata: self.startMetadata())
            self.report.startTime = .now()
            self.perform(self.machine.start())
        }
    }

    /// Retries a waiting flow now.
    package func restart() {
        submit { self.perform(self.machine.restart()) }
    }

    /// The network changed; a waiting flow tries again.
    package func pathChanged(satisfied: Bool) {
        submit { self.perform(self.machine.pathChanged(satisfied: satisfied)) }
    }

    /// Abandons the newest connection attempt (closing its socket) and starts the next address.
    package func cancelCurrentEndpoint() {
        submit { self.perform(self.machine.cancelCurrentEndpoint()) }
    }

    /// Closes the flow; `force` resets the transport instead of closing it gracefully.
    package func cancel(force: Bool) {
        inbox.withLock { $0.budget.close() }
        submit { self.perform(self.machine.cancel(force: force)) }
    }

    /// Queues a receive. The completion runs on the event loop.
    package func receive(minimum: Int, maximum: Int, completion: @escaping ReceiveCompletion) {
        submit(.receive(minimum: minimum, maximum: maximum, completion: completion))
    }

    /// Sends `data`; `isComplete` ends the message (one datagram on UDP); `closesWrite` (a final
    /// context) then closes the sending side. The completion, if any, runs once the flow has taken
    /// the bytes: on a ready stream flow with room in its send budget (`SendBudget`), at once on
    /// the calling thread, before this returns; otherwise on the event loop once the bytes were
    /// handed to the socket. Completions run in the order the sends were made, so the completion
    /// must hand its work on before returning (not defer it), or a later one could overtake it.
    package func send(
        _ data: ByteBuffer?, isComplete: Bool, closesWrite: Bool, completion: SendCompletion?
    ) {
        var send = PendingSend(data: data, isComplete: isComplete, closesWrite: closesWrite, completion: completion)
        let bytes = data?.readableBytes ?? 0
        let stream = transportKind == .tcp
        let wake = inbox.withLock { inbox -> Bool in
            // Datagram sends keep no budget: they complete once handed to the socket.
            guard stream else { return inbox.append(.send(send)) }
            let admission = inbox.admitSend(bytes: bytes, hasCompletion: completion != nil, closesWrite: closesWrite)
            send.counted = admission.counted
            if admission.completeNow {
                // Under the lock, so that concurrent senders' completions keep their order.
                completion?(nil, SendCompletionTicket(flow: self, early: true))
                send.completion = nil
            }
            return inbox.append(.send(send))
        }
        if wake { wakeLoop() }
    }

    /// Starts a batch: operations wait in the inbox, without waking the event loop, until the
    /// matching `endBatch`. (Waking the loop once per send costs a context switch each.)
    package func beginBatch() {
        inbox.withLock { $0.beginBatch() }
    }

    /// Ends a batch; everything issued inside it reaches the loop in one hop and leaves in one
    /// flush (one `sendmmsg` for datagrams).
    package func endBatch() {
        if inbox.withLock({ $0.endBatch() }) { wakeLoop() }
    }

    /// See `SendCompletionTicket.run`.
    fileprivate func completionHandlerStarts(early: Bool) {
        inbox.withLock { $0.handlerStarts(early: early) }
    }

    fileprivate func completionHandlerEnded() {
        if inbox.withLock({ $0.handlerEnded() }) { wakeLoop() }
    }

    private func wakeLoop() {
        eventLoop.execute { self.drainInbox() }
    }

    private func submit(_ body: @escaping @Sendable () -> Void) {
        submit(.other(body))
    }

    private func submit(_ operation: Operation) {
        if inbox.withLock({ $0.append(operation) }) { wakeLoop() }
    }

    private func drainInbox() {
        // The array goes with the hop: an idle flow keeps no inbox storage.
        let operations = inbox.withLock { $0.take() }

        // Hold the flush until every operation of this hop has run.
        batchDepth += 1
        for operation in operations {
            switch operation {
            case .send(let send): sendOnLoop(send)
            case .receive(let minimum, let maximum, let completion):
                receiveOnLoop(minimum: minimum, maximum: maximum, completion: completion)
            case .other(let body): body()
            }
        }
        batchDepth -= 1
        flushIfNeeded()
    }

    private func flushIfNeeded() {
        if batchDepth == 0 && needsFlush {
            needsFlush = false
            transport.channel?.flush()
        }
    }

    /// Sets an integer socket option on the flow's socket, if it has one of its own.
    package func setSocketOption(level: Int32, name: Int32, value: Int32) {
        submit {
            guard case .owned(let channel) = self.transport else { return }
            try? channel.syncOptions?.setOption(
                ChannelOptions.Types.SocketOption(level: SocketOptionLevel(level), name: name),
                value: SocketOptionValue(value))
        }
    }

    /// The kernel's TCP_INFO for the flow's socket; nil for datagram flows or without a socket.
    package func tcpInfo() -> EventLoopFuture<LinuxTCPInfo?> {
        eventLoop.flatSubmit {
            guard self.receives.mode == .stream, case .owned(let channel) = self.transport,
                let provider = channel as? SocketOptionProvider
            else { return self.eventLoop.makeSucceededFuture(nil) }
            let info: EventLoopFuture<LinuxTCPInfo> = provider.unsafeGetSocketOption(
                level: NIOBSDSocket.OptionLevel(rawValue: Int32(IPPROTO_TCP)),
                name: NIOBSDSocket.Option(rawValue: TCP_INFO))
            return info.map { Optional($0) }.recover { _ in nil }
        }
    }

    /// Runs `body` on the flow's loop with a snapshot of its transport facts.
    package func inspect<T: Sendable>(_ body: @escaping @Sendable (FlowSnapshot) -> T) -> EventLoopFuture<T> {
        eventLoop.submit { body(self.snapshot()) }
    }

    // MARK: - State machine actions

    private func perform(_ actions: [FlowStateMachine.Action]) {
        for action in actions {
            switch action {
            case .report(let state):
                NetworkLog.connection.debug("state \(Self.stateName(state))", metadata: stateMetadata(state))
                if case .waiting = state { watchPathWhileWaiting() } else { stopWatchingPath() }
                if state == .ready {
                    report.readyTime = .now()
                    setup = nil
                }
                // The send budget opens (sends may complete on the sender's thread) only once the
                // `ready` update has been handed on, so no completion can overtake it; it closes
                // before any other state is.
                let budgetOpen = receives.mode == .stream && state == .ready && !writeClosed
                if receives.mode == .stream && !budgetOpen { inbox.withLock { $0.budget.setOpen(false) } }
                stateHandler?(state)
                if budgetOpen { inbox.withLock { $0.budget.setOpen(true) } }
                if state == .cancelled { stateHandler = nil }
            case .establish:
                establish()
            case .skipCandidate:
                establishment?.skipCurrent()
            case .stopEstablishment:
                stopEstablishment()
            case .startTransport:
                startTransport()
            case .closeTransport(let abortive):
                closeTransport(abortive: abortive)
            case .failPending(let error):
                failPending(error)
            }
        }
    }

    private func establish() {
        if let unsupported = setup?.configuration.unsupported {
            perform(machine.establishmentFailed(unsupported, fatal: true))
            return
        }
        if let channel = acceptedChannel {
            acceptedChannel = nil
            report.recordAccepted()
            if case .gnuTLS(let handler) = serverSecurity {
                serverSecurity = nil
                let started = NIODeadline.now()
                handler.handshakeFuture.whenComplete { result in
                    self.inboundHandshakeFinished(result.mapError { FlowError($0) }, startedAt: started)
                }
                return
            }
            if case .tls(let handler) = serverSecurity {
                serverSecurity = nil
                let started = NIODeadline.now()
                TLSStack.waitForServerHandshake(handler, on: channel).whenComplete { result in
                    self.inboundHandshakeFinished(
                        result.mapError { FlowError(tls: $0, verifyBlock: false) }, startedAt: started)
                }
                return
            }
            perform(machine.establishmentSucceeded())
            if let error = receives.terminalError {
                // The peer reset the connection before it was started.
                perform(machine.transportFailed(error))
            }
            return
        }
        if case .shared = transport {
            if let session = serverSecurity?.dtls {
                let started = NIODeadline.now()
                session.startHandshake { result in
                    if self.inboundHandshakeFinished(result, startedAt: started) {
                        // Messages that came right behind the handshake.
                        self.deliverDecrypted(session.receive(nil))
                    }
                }
                return
            }
            perform(machine.establishmentSucceeded())
            return
        }
        guard let configuration = setup?.configuration else {
            // Only outbound flows get here, and they keep their setup until ready.
            perform(machine.establishmentFailed(.posix(EINVAL), fatal: true))
            return
        }
        let attempt = Establishment(flow: self, configuration: configuration)
        establishment = attempt
        if configuration.tcp.connectionTimeout > 0 {
            establishmentTimeout?.cancel()
            establishmentTimeout = eventLoop.scheduleTask(in: .seconds(Int64(configuration.tcp.connectionTimeout))) {
                [weak self] in
                self?.establishmentTimedOut(attempt)
            }
        }
        report.attemptCount += 1
        attempt.run()
    }

    /// An inbound flow's TLS or DTLS handshake ended: ready with what it negotiated, or failed
    /// for good (a handshake is not retried). Returns whether it succeeded.
    @discardableResult
    private func inboundHandshakeFinished(_ result: Result<TLSSessionFacts, FlowError>, startedAt started: NIODeadline) -> Bool {
        switch result {
        case .success(let facts):
            NetworkLog.tls.debug("handshake complete (inbound)", metadata: logMetadata.merging(facts.logMetadata) { a, _ in a })
            tlsSession = TLSSessionBox(facts)
            report.tlsHandshakeDuration = .now() - started
            perform(machine.establishmentSucceeded())
            return true
        case .failure(let error):
            NetworkLog.tls.debug("handshake failed (inbound): \(error.logDescription)", metadata: logMetadata)
            perform(machine.establishmentFailed(error, fatal: true))
            perform([.closeTransport(abortive: false)])
            return false
        }
    }

    /// A waiting flow tries again when the network changes (a link comes up, a route or an
    /// address appears) into a path it may use, as Apple's waiting connections do. Only waiting
    /// flows subscribe, so established ones pay nothing for it.
    private func watchPathWhileWaiting() {
        guard let box = setup, box.pathWatch == nil else { return }
        let requirements = box.configuration.pathRequirements
        box.pathBaseline = nil
        box.pathWatch = PathMonitorEngine.shared.subscribe { [weak self] inputs in
            let facts = PathEvaluator.evaluate(inputs, requirements)
            guard let self else { return }
            self.eventLoop.execute { self.pathSnapshot(facts) }
        }
    }

    private func stopWatchingPath() {
        guard let box = setup, let token = box.pathWatch else { return }
        box.pathWatch = nil
        PathMonitorEngine.shared.unsubscribe(token)
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

    private func establishmentTimedOut(_ attempt: Establishment) {
        guard establishment === attempt else { return }
        NetworkLog.connection.debug("connection timeout expired during establishment", metadata: logMetadata)
        stopEstablishment()
        // Every option was tried for as long as allowed: wait for a change (or `restart()`),
        // as when every address refused, rather than give up for good.
        perform(machine.establishmentFailed(.posix(ETIMEDOUT)))
    }

    private func stopEstablishment() {
        establishmentTimeout?.cancel()
        establishmentTimeout = nil
        establishment?.abandon()
        establishment = nil
        acceptedChannel = nil
    }

    /// The idempotent sends (no completion) at the head of the queue, joined: the data Fast Open
    /// may carry in each attempt's SYN. Called by `Establishment` on the loop; nil when there is
    /// none or the flow is not TCP.
    func fastOpenData() -> (data: ByteBuffer, sends: Int)? {
        guard receives.mode == .stream else { return nil }
        var joined = ByteBuffer()
        var count = 0
        for send in queuedSends {
            guard send.completion == nil, !send.closesWrite else { break }
            if var data = send.data { joined.writeBuffer(&data) }
            count += 1
        }
        return count > 0 && joined.readableBytes > 0 ? (joined, count) : nil
    }

    /// Called by `Establishment` on the loop.
    func establishmentFinished(_ attempt: Establishment, result: Result<Channel, FlowError>) {
        guard establishment === attempt else {
            if case .success(let channel) = result { channel.close(promise: nil) }
            return
        }
        establishment = nil
        establishmentTimeout?.cancel()
        establishmentTimeout = nil
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
        if let facts = attempt.tlsFacts { tlsSession = TLSSessionBox(facts) }
        switch result {
        case .success(let channel):
            transport = .owned(channel)
            // The winner already wrote the Fast Open data (in its SYN, or right after connecting).
            for _ in 0..<min(attempt.fastOpenSends, queuedSends.count) {
                let sent = queuedSends.removeFirst()
                report.sentBytes += UInt64(sent.data?.readableBytes ?? 0)
                finish(sent, nil)
            }
            perform(machine.establishmentSucceeded())
            if machine.state != .ready {
                // Cancelled in the meantime.
                channel.close(promise: nil)
            }
        case .failure(let error):
            perform(machine.establishmentFailed(error))
        }
    }

    private func startTransport() {
        requestReadIfNeeded()
        // Sends issued before the connection was ready leave now, in order.
        let queued = queuedSends
        queuedSends.removeAll()
        batchDepth += 1
        for send in queued { write(send) }
        batchDepth -= 1
        flushIfNeeded()
    }

    private func closeTransport(abortive: Bool) {
        let closing = transport
        // Detach first: NIO reports the close synchronously, and those events must not be
        // mistaken for the peer's end of stream.
        transport = .none
        switch closing {
        case .none:
            return
        case .owned(let channel):
            if abortive, let provider = channel as? SocketOptionProvider {
                // SO_LINGER with a zero timeout makes close() send a reset.
                _ = provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).always { _ in
                    channel.close(promise: nil)
                }
            } else {
                // A TLS close waits for the peer's close_notify: let the socket read it (reads
                // are on demand otherwise) and close on the peer's FIN (half-closure would keep
                // it open), or the socket lingers in CLOSE-WAIT until NIOSSL's 5 s timeout.
                if receives.mode == .stream {
                    // (Datagram channels have no such option: NIO traps on it.)
                    try? channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
                    try? channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
                }
                // Writes of this loop turn are not flushed yet, and the flow lets go of the channel.
                if needsFlush {
                    needsFlush = false
                    channel.flush()
                }
                if receives.mode == .stream && !writeClosed && inbox.withLock({ $0.budget.unwritten }) > 0 {
                    Self.close(channel, afterWritesWithin: Self.closeLinger)
                } else {
                    channel.close(promise: nil)
                }
            }
        case .shared(let peer):
            // DTLS says goodbye (close_notify) before the peer's slot is given up.
            serverSecurity?.dtls?.close()
            peer.release()
        }
    }

    /// How long a gracefully closed stream socket may take to write what its sends handed over
    /// (they completed as they were taken) before it is closed regardless: a peer that stops
    /// reading must not hold the socket and its buffers for ever.
    static let closeLinger: TimeAmount = .seconds(10)

    /// Closes `channel` once everything written to it has gone out, as close(2) leaves a
    /// socket's send buffer to drain: shut the output (NIO does so after the pending writes, TLS
    /// after its close_notify), then close. Closes at once after `limit`.
    private static func close(_ channel: Channel, afterWritesWithin limit: TimeAmount) {
        let drained = channel.eventLoop.makePromise(of: Void.self)
        let deadline = channel.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
        drained.futureResult.whenComplete { _ in
            deadline.cancel()
            channel.close(promise: nil)
        }
        channel.close(mode: .output, promise: drained)
    }

    private func failPending(_ error: FlowError) {
        for (completion, outcome) in receives.failAll(error) { completion(outcome) }
        let queued = queuedSends
        queuedSends.removeAll()
        for send in queued { finish(send, error) }
    }

    // MARK: - Receiving

    private func receiveOnLoop(minimum: Int, maximum: Int, completion: @escaping ReceiveCompletion) {
        switch machine.state {
        case .cancelled:
            completion(.failure(.posix(ECANCELED)))
            return
        case .failed(let error):
            completion(.failure(error))
            return
        default:
            break
        }
        for (c, outcome) in receives.enqueue(minimum: minimum, maximum: maximum, token: completion) {
            c(outcome)
        }
        requestReadIfNeeded()
    }

    private var highWaterBytes: Int {
        receives.mode == .stream ? Self.streamHighWater : Self.streamHighWater * 4
    }

    private func requestReadIfNeeded() {
        guard machine.state == .ready, !readInFlight, case .owned(let channel) = transport, channel.isActive else {
            return
        }
        guard receives.wantsRead(highWater: highWaterBytes),
            receives.bufferedDatagramCount < Self.datagramHighWaterCount
        else { return }
        readInFlight = true
        channel.read()
    }

    func transportRead(_ buffer: ByteBuffer, channel: Channel) {
        guard channel === transport.channel else { return }
        NetworkLog.connection.trace("received \(buffer.readableBytes) bytes", metadata: logMetadata)
        report.receivedBytes += UInt64(buffer.readableBytes)
        for (completion, outcome) in receives.append(buffer) { completion(outcome) }
    }

    func transportActive(channel: Channel) {
        guard channel === transport.channel else { return }
        requestReadIfNeeded()
    }

    func transportReadComplete(channel: Channel) {
        guard channel === transport.channel else { return }
        readInFlight = false
        requestReadIfNeeded()
    }

    func transportEndOfStream(channel: Channel) {
        guard channel === transport.channel else { return }
        NetworkLog.connection.debug("peer closed its sending side (end of stream)", metadata: logMetadata)
        readInFlight = false
        for (completion, outcome) in receives.receivedEndOfStream() { completion(outcome) }
    }

    func transportInactive(channel: Channel) {
        guard channel === transport.channel else { return }
        readInFlight = false
        // Errors (a reset included) reach `transportError` before the channel goes inactive, and
        // our own closes detach the channel first. What remains is NIO closing the socket after
        // the peer's FIN when our side had already shut its output: an orderly end of stream.
        if receives.mode == .stream && !receives.endOfStream && receives.terminalError == nil {
            for (completion, outcome) in receives.receivedEndOfStream() { completion(outcome) }
        }
    }

    func transportError(_ error: FlowError, channel: Channel) {
        guard channel === transport.channel else { return }
        if receives.mode == .datagram, case .posix(ECONNREFUSED) = error {
            // ICMP port unreachable for an earlier datagram: not fatal for UDP, as on Apple.
            NetworkLog.connection.trace("ICMP port unreachable (ignored on UDP)", metadata: logMetadata)
            return
        }
        NetworkLog.connection.debug("transport error: \(error.logDescription)", metadata: logMetadata)
        for (completion, outcome) in receives.fail(error) { completion(outcome) }
        perform(machine.transportFailed(error))
    }

    /// Whether the flow was started (or cancelled); call on its event loop.
    package var hasStarted: Bool {
        eventLoop.preconditionInEventLoop()
        return machine.state != .setup
    }

    /// A datagram for this flow arrived on a listener's shared socket. Returns false when the
    /// flow's buffer is full and the datagram was dropped.
    @discardableResult
    package func deliverSharedDatagram(_ buffer: ByteBuffer) -> Bool {
        eventLoop.preconditionInEventLoop()
        guard receives.bufferedDatagramCount < Self.datagramHighWaterCount else { return false }
        guard machine.state != .cancelled else { return false }
        if let session = serverSecurity?.dtls {
            deliverDecrypted(session.receive(buffer))
            return true
        }
        NetworkLog.connection.trace("received datagram of \(buffer.readableBytes) bytes", metadata: logMetadata)
        report.receivedBytes += UInt64(buffer.readableBytes)
        for (completion, outcome) in receives.append(buffer) { completion(outcome) }
        return true
    }

    /// Hands a DTLS peer's decrypted messages to the receives, then its end if it ended.
    private func deliverDecrypted(_ received: (messages: [ByteBuffer], end: GnuTLSSession.End?)) {
        for message in received.messages {
            NetworkLog.connection.trace("received DTLS message of \(message.readableBytes) bytes", metadata: logMetadata)
            report.receivedBytes += UInt64(message.readableBytes)
            for (completion, outcome) in receives.append(message) { completion(outcome) }
        }
        switch received.end {
        case nil:
            break
        case .closed:
            for (completion, outcome) in receives.receivedEndOfStream() { completion(outcome) }
        case .failed(let error):
            for (completion, outcome) in receives.fail(error) { completion(outcome) }
            perform(machine.transportFailed(error))
        }
    }

    /// The listener's shared socket closed under this flow.
    package func sharedTransportFailed(_ error: FlowError) {
        eventLoop.preconditionInEventLoop()
        for (completion, outcome) in receives.fail(error) { completion(outcome) }
        perform(machine.transportFailed(error))
    }

    // MARK: - Sending

    private func sendOnLoop(_ send: PendingSend) {
        switch machine.state {
        case .cancelled:
            finish(send, .posix(ECANCELED))
        case .failed(let error):
            finish(send, error)
        case .setup, .preparing, .waiting:
            queuedSends.append(send)
        case .ready:
            write(send)
            flushIfNeeded()
        }
    }

    /// A send's end on the loop: calls its completion, if it still has one, and gives its share
    /// of the send budget back.
    private func finish(_ send: PendingSend, _ error: FlowError?) {
        let stream = transportKind == .tcp
        send.completion?(error, SendCompletionTicket(flow: stream ? self : nil, early: false))
        guard stream, send.counted || send.completion != nil else { return }
        let bytes = send.data?.readableBytes ?? 0
        inbox.withLock {
            $0.budget.settle(bytes: bytes, counted: send.counted, calledCompletion: send.completion != nil)
        }
    }

    /// Writes without flushing; the caller flushes (so batches leave together).
    private func write(_ send: PendingSend) {
        guard let channel = transport.channel else {
            finish(send, .posix(ENOTCONN))
            return
        }
        if writeClosed {
            finish(send, .posix(EPIPE))
            return
        }
        var promise: EventLoopPromise<Void>?
        if send.completion != nil || send.counted {
            let p = eventLoop.makePromise(of: Void.self)
            p.futureResult.whenComplete { result in
                switch result {
                case .success: self.finish(send, nil)
                case .failure(let error): self.finish(send, FlowError(error))
                }
            }
            promise = p
        }
        switch receives.mode {
        case .stream:
            if let data = send.data, data.readableBytes > 0 {
                NetworkLog.connection.trace("send \(data.readableBytes) bytes", metadata: logMetadata)
                report.sentBytes += UInt64(data.readableBytes)
                channel.write(data, promise: promise)
                needsFlush = true
            } else {
                promise?.succeed()
            }
            if send.isComplete && send.closesWrite {
                writeClosed = true
                inbox.withLock { $0.budget.setOpen(false) }
                channel.flush()
                needsFlush = false
                channel.close(mode: .output, promise: nil)
            }
        case .datagram:
            var datagram: ByteBuffer
            if var partial = partialDatagram {
                if var data = send.data { partial.writeBuffer(&data) }
                datagram = partial
            } else if let data = send.data {
                datagram = data
            } else if send.isComplete && partialDatagram == nil {
                // Nothing to send: a bare completion (for example a final context on UDP).
                promise?.succeed()
                return
            } else {
                datagram = ByteBuffer()
            }
            guard send.isComplete else {
                partialDatagram = datagram
                promise?.succeed()
                return
            }
            partialDatagram = nil
            NetworkLog.connection.trace("send datagram of \(datagram.readableBytes) bytes", metadata: logMetadata)
            report.sentBytes += UInt64(datagram.readableBytes)
            if let session = serverSecurity?.dtls {
                session.send(datagram, promise: promise)
            } else if case .shared(let peer) = transport {
                let remote = peer.remote
                channel.write(AddressedEnvelope(remoteAddress: remote, data: datagram), promise: promise)
            } else {
                channel.write(datagram, promise: promise)
            }
            needsFlush = true
        }
    }

    // MARK: - Introspection

    /// Facts about the flow now; call on its event loop (for example from a state handler).
    package func snapshotOnLoop() -> FlowSnapshot {
        eventLoop.preconditionInEventLoop()
        return snapshot()
    }

    private func snapshot() -> FlowSnapshot {
        let channel = transport.channel
        var remote = channel?.remoteAddress
        if case .shared(let peer) = transport { remote = peer.remote }
        if remote == nil, channel != nil {
            // A Fast Open connect is deferred, so NIO never learnt the peer's address: it is the
            // address that won the race (or the literal target).
            remote = report.resolution?.successful
        }
        return FlowSnapshot(
            state: machine.state,
            localAddress: channel?.localAddress,
            remoteAddress: remote,
            channel: channel,
            bufferedInboundBytes: receives.bufferedBytes,
            isDatagram: receives.mode == .datagram,
            report: report,
            tlsSession: tlsSession?.facts
        )
    }

    // MARK: - Logging (built only when a line is written)

    /// The flow's name, the metadata every line about it carries.
    var logMetadata: Logger.Metadata { LogIDs.connectionMetadata(logID) }

    private func startMetadata() -> Logger.Metadata {
        var metadata = logMetadata
        let remote: String
        if let target = setup?.configuration.target {
            if case .address(let address) = target { remote = address.logText } else { remote = "\(target)" }
        } else if case .shared(let peer) = transport {
            remote = peer.remote.logText
        } else {
            remote = transport.channel?.remoteAddress?.logText ?? "unknown"
        }
        metadata["endpoint"] = "\(remote)"
        metadata["transport"] = "\(transportKind == .tcp ? "tcp" : "udp")"
        metadata["direction"] = "\(setup == nil ? "inbound" : "outbound")"
        if setup?.configuration.tls != nil || serverSecurity != nil { metadata["security"] = "\(transportKind == .tcp ? "tls" : "dtls")" }
        return metadata
    }

    private static func stateName(_ state: FlowConnectionState) -> String {
        switch state {
        case .setup: return "setup"
        case .waiting: return "waiting"
        case .preparing: return "preparing"
        case .ready: return "ready"
        case .failed: return "failed"
        case .cancelled: return "cancelled"
        }
    }

    private func stateMetadata(_ state: FlowConnectionState) -> Logger.Metadata {
        var metadata = logMetadata
        switch state {
        case .waiting(let error):
            metadata["error"] = "\(error.logDescription)"
            metadata["retry"] = "on a path change or restart()"
        case .failed(let error):
            metadata["error"] = "\(error.logDescription)"
        case .ready:
            if let local = transport.channel?.localAddress { metadata["local"] = "\(local.logText)" }
            if case .shared(let peer) = transport {
                metadata["remote"] = "\(peer.remote.logText)"
            } else if let remote = transport.channel?.remoteAddress ?? report.resolution?.successful {
                metadata["remote"] = "\(remote.logText)"
            }
        default:
            break
        }
        return metadata
    }
}

/// Facts about a flow at one moment, taken on its event loop.
package struct FlowSnapshot: @unchecked Sendable {
    package var state: FlowConnectionState
    package var localAddress: SocketAddress?
    package var remoteAddress: SocketAddress?
    /// The transport channel, for reading socket options (tests, metadata).
    package var channel: Channel?
    package var bufferedInboundBytes: Int
    package var isDatagram: Bool
    package var report: FlowReport
    /// The negotiated TLS session, if the stack has TLS and the handshake completed.
    package var tlsSession: TLSSessionFacts?
}

/// A listener's datagram socket as one peer's flow sees it: where its datagrams go, and what to
/// call when the flow no longer needs the socket.
final class SharedDatagramPeer: Sendable {
    let channel: Channel
    let remote: SocketAddress
    let release: @Sendable () -> Void

    init(channel: Channel, remote: SocketAddress, release: @escaping @Sendable () -> Void) {
        self.channel = channel
        self.remote = remote
        self.release = release
    }
}

/// Handed with every send completion: the handler must run inside `run`, on the queue it is
/// delivered to. While it runs, sends it makes do not wake the flow's event loop one by one; the
/// loop is woken once it (or the chain of handlers it starts) returns (see `FlowInbox`).
/// (Datagram flows hand out empty tickets: their sends never complete early, and their
/// completions are batched per loop turn instead.)
package struct SendCompletionTicket: Sendable {
    fileprivate let flow: Flow?
    fileprivate let early: Bool

    package func run(_ handler: () -> Void) {
        guard let flow else { return handler() }
        flow.completionHandlerStarts(early: early)
        handler()
        flow.completionHandlerEnded()
    }
}
