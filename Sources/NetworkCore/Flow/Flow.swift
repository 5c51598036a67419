#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NIOSSL
import NetworkDNS
import Synchronization

/// One connection, outbound or inbound, over TCP or UDP (with TLS/DTLS when configured).
///
/// A flow lives on one event loop and its state is touched only there; its public methods may
/// be called from any thread and reach the loop through the flow's mailbox (`FlowMailbox`). Its
/// parts, each in its own file:
/// - `FlowStateMachine`: the life cycle, the data of each state (a ready flow's read and the ends
///   of its two directions), and per state what becomes of a send or a receive;
/// - `FlowSendPath`: sends waiting for `ready`, datagram assembly, the closed sending side;
/// - `ReceiveQueue`: inbound data and the receives waiting for it;
/// - `FlowMailbox` (with `FlowInbox`, `SendBudget`): hand-over from other threads;
/// - `FlowTransport`: an owned socket, or one peer of a listener's shared datagram socket;
/// - extensions: establishment (`Flow+Establishment`), transport events (`Flow+Transport`),
///   sending, receiving, introspection and logging.
/// Events go out through the handlers set in `observe` and the operations' completions, called
/// on the event loop in the order they happened.
package final class Flow: @unchecked Sendable {
    package typealias StateHandler = @Sendable (FlowConnectionState) -> Void
    /// Called with the send's error, if any, and a ticket through which the handler must run
    /// (see `SendCompletionTicket`).
    package typealias SendCompletion = @Sendable (FlowError?, SendCompletionTicket) -> Void

    // The stored properties are declared in an order that leaves almost no padding (small
    // fields fill the holes next to larger ones): every idle connection pays for each byte.
    // (Check with the class's instance size: glibc hands out 16-byte steps, so 8 bytes saved
    // count only when they cross one.)
    package let eventLoop: EventLoop
    // (Where an outbound flow goes lives in `setup` until it is ready; an inbound flow's peer
    // is its socket's. Not kept per flow: every connection pays for each stored byte.)
    /// The full configuration, needed only until the flow is established; boxed and released
    /// then, so an established flow does not carry ~240 bytes of socket settings around.
    var setup: FlowSetup?

    /// Inbound bytes buffered per stream flow before reading pauses (backpressure).
    package static let streamHighWater = 512 * 1024
    /// Inbound datagrams buffered per datagram flow before reading pauses (or, on a shared
    /// listener socket, before further datagrams for that peer are dropped).
    package static let datagramHighWaterCount = 1024
    /// Inbound datagram bytes buffered per datagram flow before reading pauses (or drops).
    package static let datagramHighWaterBytes = streamHighWater * 4

    /// Operations from other threads wait here and are run by one event-loop task per batch,
    /// so a send and a receive issued together cost one hop, and everything one hop carries
    /// leaves in one flush.
    let mailbox = FlowMailbox()

    // Everything below is touched on `eventLoop` only, unless it is atomic. The loop already
    // serialises every access to the hot ones, so they are marked `@exclusivity(unchecked)`:
    // Swift's dynamic exclusivity check on them cost ~5% of a framed message's CPU (pinned
    // A/B, Benchmarks/RESULTS.md), and the debug suite ran clean with the checks on first.
    @exclusivity(unchecked) var machine = FlowStateMachine()
    /// A refresh of `kernelUnacknowledged` is on its way to the loop.
    let kernelRefreshPending = Atomic<Bool>(false)
    /// Drains in progress (nested at most a few deep); the flush waits until none is.
    @exclusivity(unchecked) var batchDepth: Int16 = 0
    /// TCP_INFO's notsent + unacked as last read on the loop, for readers on other threads
    /// (see `tcpBufferFacts`); clamped, as the metadata that reports it is 32 bits wide.
    let kernelUnacknowledged = Atomic<UInt32>(0)
    /// The flow's number in log lines (`C<n>`). (In the padding after the 32-bit counter.)
    package let logID = LogIDs.nextConnection()
    @exclusivity(unchecked) var receives: ReceiveQueue<FlowReceiver> {
        // Mirrored for readers on other threads (TCP metadata); a relaxed store, no lock.
        didSet {
            unreadInboundBytes.store(UInt32(clamping: receives.bufferedBytes), ordering: .relaxed)
            updateReadArming()
        }
    }
    /// `receives.bufferedBytes`, readable from any thread: 32 bits (as the TCP metadata that
    /// reports it), in the four bytes the queue leaves over.
    let unreadInboundBytes = Atomic<UInt32>(0)
    @exclusivity(unchecked) var transport: FlowTransport = .none
    @exclusivity(unchecked) var sendPath = FlowSendPath()
    // The one-byte fields, in the padding after `sendPath` (which ends with flags).
    /// TCP or UDP.
    package let transportKind: FlowTransportKind
    /// Framers run above the transport (`FlowConfiguration.framers`): the flow carries whole
    /// messages with their framer metadata, whatever the transport.
    package let isFramed: Bool
    /// A byte stream runs above the framers (TLS a framer prepended): the flow's receives and
    /// sends are a stream after all. Set once before the flow is ready (at creation for TLS the
    /// parameters put there, else on the loop when the top framer is ready); read by
    /// `receiveMessage` on any thread.
    let streamAboveFramers = Atomic<Bool>(false)
    /// The message layer at the top of the owned channel's stack (a framer, WebSocket), which
    /// takes the flow's messages in direct calls (`FlowMessageLayer`); nil until joined, and for
    /// a datagram listener's peer.
    @exclusivity(unchecked) var messageLayer: (any FlowMessageLayer)?
    // Loop-only flags.
    @exclusivity(unchecked) var needsFlush = false
    /// The loop's copy of `FlowInbox.readArmed`: receives from other threads wait for the
    /// outstanding read instead of waking the loop (see `updateReadArming`).
    @exclusivity(unchecked) var readArmed = false
    /// The mailbox holds a `DirectSocket` (plain TCP we connected): the loop keeps arming direct
    /// writes whenever it has nothing left to write.
    @exclusivity(unchecked) var directSocketAttached = false
    /// A flush of messages sent on the loop itself is on its way (`Flow+LoopCallers`).
    @exclusivity(unchecked) var loopFlushScheduled = false
    /// Bytes and messages sent on the loop itself since the last flush (`Flow+LoopCallers`).
    @exclusivity(unchecked) var loopUnflushedBytes: UInt32 = 0
    @exclusivity(unchecked) var loopUnflushedMessages: UInt16 = 0
    // (The facts that die with `ready`, the read in flight and the ends of the two directions,
    // live in the state machine's `ready` state.)
    /// Datagrams taken since the last flush, written at the flush (`DatagramOutbox`).
    @exclusivity(unchecked) var datagramOutbox = DatagramOutbox()
    /// Large stream sends taken since the last flush, still in their callers' `Data`, written
    /// at the flush in one system call (`Flow+UncopiedSends`).
    @exclusivity(unchecked) var uncopiedSends: [FlowSend] = []
    #if DEBUG
    /// Bytes of held sends the loop wrote from their callers' `Data` (debug builds; loop-only).
    var uncopiedBytesWritten: UInt64 = 0
    /// Flushes of the channel `flushIfNeeded` made (debug builds; loop-only).
    package var flushCount = 0
    #endif
    var stateHandler: StateHandler?
    /// The establishment run in progress: it lives in `setup`, which outlives it (a flow is
    /// ready only once its run is over).
    var establishment: Establishment? {
        get { setup?.establishment }
        set { setup?.establishment = newValue }
    }
    @exclusivity(unchecked) package internal(set) var report = FlowReport()
    /// The negotiated TLS session and WebSocket handshake, boxed (most flows have neither).
    var sessionFacts: StackSessionBox?
    /// The security layer a listener set up for this flow (see `FlowServerSecurity`).
    var serverSecurity: FlowServerSecurity?
    /// The layers a listener set up for this flow (framers, the WebSocket upgrade), bottom first:
    /// they start when the flow does, after its TLS handshake (an outbound flow's start with its
    /// stack).
    var inboundLayers: [any InboundStackLayer] = []

    /// The flow's receives and sends are whole messages (datagrams, or framed over a stream).
    package var carriesMessages: Bool {
        transportKind.carriesDatagrams || (isFramed && !streamAboveFramers.load(ordering: .relaxed))
    }

    /// An outbound flow; nothing happens until `start`.
    package convenience init(configuration: FlowConfiguration, eventLoop: EventLoop = Engine.nextEventLoop()) {
        self.init(
            transport: configuration.transport, fragmentationDisabled: configuration.ip.disableFragmentation,
            framed: configuration.carriesFramedMessages, eventLoop: eventLoop)
        self.setup = FlowSetup(configuration)
        // TLS the parameters put on top of the framers: a stream from the start.
        if configuration.framers.first?.tlsAbove != nil { carryStreamAboveFramers() }
    }

    /// An outbound flow whose configuration comes with `start(configuration:)`.
    ///
    /// What only establishment needs (`FlowSetup`, a few hundred bytes) is then allocated when
    /// the flow starts and freed when it is ready. Allocated at creation, it lies between the
    /// long-lived objects of connections created one after the other, and freed it leaves holes
    /// that keep their pages resident (measured: ~100 B per idle connection over the heap when
    /// 10,000 connections were created before any started).
    package init(
        transport: FlowTransportKind, fragmentationDisabled: Bool, framed: Bool = false, eventLoop: EventLoop = Engine.nextEventLoop()
    ) {
        self.transportKind = transport
        self.isFramed = framed
        self.eventLoop = eventLoop
        self.receives = ReceiveQueue(mode: transport.isStream && !framed ? .stream : .datagram)
        self.sendPath.fragmentationDisabled = fragmentationDisabled
    }

    private init(accepted channel: Channel, framed: Bool, transport: FlowTransportKind) {
        self.transportKind = transport
        self.isFramed = framed
        self.eventLoop = channel.eventLoop
        self.receives = ReceiveQueue(mode: transport.isStream && !framed ? .stream : .datagram)
        self.transport = .owned(channel)
    }

    /// A flow for a channel a listener accepted; it becomes ready as soon as it is started.
    /// Call on the channel's event loop: the flow's handler goes into the pipeline at once, so
    /// whatever NIO reads before the user starts the connection (data, a FIN) is kept for it.
    package static func adopting(
        accepted channel: Channel, configuration: FlowConfiguration, tls: (NIOSSLContext, FlowTLSConfiguration)? = nil,
        gnuTLS: FlowTLSConfiguration? = nil, transport: FlowTransportKind = .tcp
    ) throws -> Flow {
        channel.eventLoop.preconditionInEventLoop()
        // (A QUIC connection's own flow, `.quicDatagram`, carries no framers: its streams do.)
        let flow = Flow(accepted: channel, framed: configuration.carriesFramedMessages && transport != .quicDatagram, transport: transport)
        if configuration.framers.first?.tlsAbove != nil { flow.carryStreamAboveFramers() }
        let handshakeTimeout = FlowServerSecurity.handshakeTimeout(connectionTimeout: configuration.tcp.connectionTimeout)
        if let settings = gnuTLS {
            let handler = GnuTLSStreamHandler(
                role: .server, settings: settings, handshake: channel.eventLoop.makePromise(of: TLSSessionFacts.self))
            try channel.pipeline.syncOperations.addHandler(handler, position: .first)
            flow.serverSecurity = .gnuTLS(handler, handshakeTimeout: handshakeTimeout)
        } else if let (context, settings) = tls {
            flow.serverSecurity = .tls(
                try TLSStack.addServerHandler(to: channel, context: context, settings: settings), handshakeTimeout: handshakeTimeout)
        }
        if flow.isFramed {
            // Over the security layer, bottom first; they start with the flow.
            if let webSocket = configuration.webSocket {
                flow.inboundLayers.append(
                    try WebSocketStack.addServer(to: channel, configuration: webSocket, handshakeTimeout: handshakeTimeout))
            }
            let framers = configuration.framers.reversed().map { FramerHost(factory: $0, eventLoop: channel.eventLoop) }
            let handlers = FramerHandler.stack(framers, startsAtOnce: false)
            for handler in handlers {
                try channel.pipeline.syncOperations.addHandler(handler)
            }
            flow.inboundLayers.append(contentsOf: framers as [any InboundStackLayer])
            let flowHandler = FlowChannelHandler<FramedMessage, WeakFlowLink>(flow: flow)
            try channel.pipeline.syncOperations.addHandler(flowHandler)
            if let top = handlers.last {
                flowHandler.join(top, channel: channel)
            } else if let webSocket = try? channel.pipeline.syncOperations.handler(type: WebSocketMessageHandler.self) {
                // (Without a handshake its frame handlers are there already.)
                flowHandler.join(webSocket, channel: channel)
            }
        } else {
            try channel.pipeline.syncOperations.addHandler(FlowChannelHandler<ByteBuffer, WeakFlowLink>(flow: flow))
        }
        return flow
    }

    /// A flow for one remote peer of a datagram listener, writing through the listener's
    /// `writer` when it has one; `release` is called once when the flow no longer uses the
    /// shared socket.
    init(
        sharedDatagramChannel channel: Channel,
        remote: SocketAddress,
        configuration: FlowConfiguration,
        dtls: GnuTLSSession? = nil,
        writer: DatagramWriter? = nil,
        release: @escaping @Sendable () -> Void
    ) {
        self.transportKind = .udp
        self.isFramed = !configuration.framers.isEmpty
        self.eventLoop = channel.eventLoop
        self.receives = ReceiveQueue(mode: .datagram)
        let peer = SharedDatagramPeer(channel: channel, remote: remote, dtls: dtls, writer: writer, release: release)
        self.transport = .shared(peer)
        self.sendPath.fragmentationDisabled = configuration.ip.disableFragmentation
        // The peer's own framers; they start when the flow does (after DTLS).
        peer.attachFramers(configuration.framers, flow: self)
        inboundLayers = peer.framers?.hosts ?? []
    }

    deinit {
        // (A waiting flow's path subscription ends with `setup`.)
        // A flow dropped without being started or cancelled must not leak its socket.
        if case .owned(let channel) = transport { channel.close(promise: nil) }
        if case .shared(let peer) = transport { peer.abandon() }
    }

    // MARK: - Public operations (any thread)

    /// Sets the receiver of every later state change (including a `cancelled` that comes before
    /// `start`); a later call replaces it. Call it before the operation whose states it must see
    /// (`start`, or a `cancel` before `start`): nothing but those changes an unstarted flow's state.
    package func observe(_ stateHandler: @escaping StateHandler) {
        submit {
            guard self.machine.state != .cancelled else { return }
            self.stateHandler = stateHandler
        }
    }

    /// Starts establishment.
    package func start() {
        start(setup: nil)
    }

    /// Starts a flow made without its configuration (`init(transport:fragmentationDisabled:)`);
    /// ignored for one that has it.
    package func start(configuration: FlowConfiguration) {
        // (Made here, on the caller's thread: see `init(transport:fragmentationDisabled:)`.)
        start(setup: FlowSetup(configuration))
    }

    private func start(setup: FlowSetup?) {
        // Handed to the loop once and only used there from then on.
        nonisolated(unsafe) let newSetup = setup
        submit {
            guard case .setup = self.machine.state else { return }
            if let newSetup, self.setup == nil, case .none = self.transport { self.setup = newSetup }
            if let configuration = self.setup?.configuration { self.sendPath.socketHasDSCP = configuration.trafficClass != .bestEffort }
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
        mailbox.budget { $0.close() }
        submit { self.perform(self.machine.cancel(force: force)) }
    }

    /// Queues a receive. The receiver's completion runs on the event loop. On a stream with a
    /// read outstanding and nothing buffered, it does not wake the loop: the loop takes it when
    /// the read brings something (`FlowInbox.readArmed`).
    func receive(minimum: Int, maximum: Int, receiver: FlowReceiver) {
        if takesOperationsNow {
            return receiveOnLoop(minimum: minimum, maximum: maximum, receiver: receiver)
        }
        // (A receive the loop answers at once, such as invalid bounds, must reach it now.)
        let lazy = EngineTuning.directIO && ReceiveQueue<FlowReceiver>.validBounds(minimum: minimum, maximum: maximum)
        if lazy && mayLeaveReadyDatagrams, let (datagram, resumeReading) = mailbox.takeReadyDatagram(maximum: maximum) {
            // A datagram the loop left for this: no hop to the loop (`FlowInbox.readyDatagrams`).
            receiver.complete(.data(datagram.bytes, isComplete: true, isFinal: false, message: datagram.metadata))
            if resumeReading { submit { self.requestReadIfNeeded() } }
            return
        }
        if mailbox.submit(.receive(minimum: minimum, maximum: maximum, receiver: receiver), lazy: lazy) {
            wakeLoop()
        }
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
        submit(send: FlowSend(data: data, isComplete: isComplete, closesWrite: closesWrite, completion: completion))
    }

    /// Sends `send` (see `send(_:isComplete:closesWrite:completion:)`); a stream send's bytes may
    /// still be in the caller's `Data` (`FlowSend.uncopied`).
    package func submit(send: consuming FlowSend) {
        // Datagram sends keep no budget: they complete once handed to the socket.
        guard transportKind.isStream else {
            if submitDatagram(consume send) { wakeLoop() }
            return
        }
        let (wake, written) = mailbox.submitStreamSend(consume send) {
            // (An inline completion runs no ticket, and none was counted for it.)
            $0.completion?(nil, SendCompletionTicket(flow: $0.completionRunsInline ? nil : self, early: true))
        }
        if written > 0 {
            NetworkLog.traceConnection("send \(written) bytes (from the sender's thread)", metadata: logMetadata)
        }
        if wake { wakeLoop() }
    }

    /// Starts a batch: operations wait in the mailbox, without waking the event loop, until the
    /// matching `endBatch`. (Waking the loop once per send costs a context switch each.)
    package func beginBatch() {
        mailbox.beginBatch()
    }

    /// Ends a batch; everything issued inside it reaches the loop in one hop and leaves in one
    /// flush (one `sendmmsg` for datagrams).
    package func endBatch() {
        if mailbox.endBatch() { wakeLoop() }
    }

    /// Runs one of the application's callbacks for this flow (on its queue). Operations the
    /// callback issues wake the event loop once, when it returns, instead of one by one: a
    /// receive handler that sends the next request and receives again costs one wake-up (and on
    /// a shared CPU one context switch) instead of two. Same rule as send completions
    /// (`SendCompletionTicket`, `FlowInbox`).
    /// `queued`: the callback was announced with `callbackQueued()` when it was handed to the
    /// queue.
    package func runCallback(queued: Bool = false, _ body: () -> Void) {
        mailbox.handlerStarts(early: queued)
        body()
        if mailbox.handlerEnded() { wakeLoop() }
    }

    /// A callback of this flow is on its way to the application's queue, to be run with
    /// `runCallback(queued: true)`: until it has run, a callback before it that ends does not wake
    /// the loop for what it issued (the next one may issue more, and the last one wakes it for
    /// all). The callbacks of one read (messages, datagrams) then cost one wake-up of the loop,
    /// not one each: on a shared CPU each wake-up let the loop preempt the queue and take a
    /// single send. Call it exactly once per such callback, on any thread: a callback announced
    /// and never run would hold the loop's wake-up back (for at most `FlowInbox.maxChain`
    /// callbacks in a row).
    package func callbackQueued() {
        mailbox.handlerQueued()
    }

    /// See `SendCompletionTicket.run`.
    func completionHandlerStarts(early: Bool) {
        mailbox.handlerStarts(early: early)
    }

    func completionHandlerEnded() {
        if mailbox.handlerEnded() { wakeLoop() }
    }

    // MARK: - The hop to the loop

    func wakeLoop() {
        eventLoop.execute { self.drainMailbox() }
    }

    /// Queues a datagram send (`submitDatagram`) and wakes the loop if needed.
    func submit(datagram send: consuming FlowSend) {
        if submitDatagram(consume send) { wakeLoop() }
    }

    func submit(_ body: @escaping @Sendable () -> Void) {
        if mailbox.submit(.other(body)) { wakeLoop() }
    }

    private func submit(_ operation: FlowOperation) {
        if mailbox.submit(operation) { wakeLoop() }
    }

    private func drainMailbox() {
        // The array goes with the hop: an idle flow keeps no mailbox storage.
        var (operations, reclaimed) = mailbox.take()
        // Receives among them came before the datagrams left for other threads were taken.
        if !reclaimed.isEmpty { complete(receives.prependDatagrams(reclaimed)) }
        // Datagram sends' bytes, copied into one buffer for the hop.
        // (A framed flow's sends keep their bytes in the caller's `Data` even when a stream runs
        // above its framers.)
        var datagramBytes = receives.mode == .datagram || isFramed ? gatherDatagramBytes(operations) : nil
        // Hold the flush until every operation of this hop has run.
        batchDepth += 1
        // Each operation is moved out of the array, not copied: a copy retains every reference
        // a send holds (its bytes, its completion), and the array's end releases them again.
        // (What stays behind is a stand-in holding nothing, dropped with the array, never run.)
        for index in operations.indices {
            var operation = FlowOperation.directWriteFailed(0)
            swap(&operation, &operations[index])
            switch consume operation {
            case .send(var send):
                takeDatagramBytes(&send, from: &datagramBytes)
                sendOnLoop(consume send)
            case .receive(let minimum, let maximum, let receiver):
                receiveOnLoop(minimum: minimum, maximum: maximum, receiver: receiver)
            case .other(let body): body()
            case .directWriteFailed(let code): directWriteFailed(code)
            }
        }
        batchDepth -= 1
        flushIfNeeded()
        armDirectWritesIfIdle()
        publishReadyDatagrams()
    }

    func flushIfNeeded() {
        if batchDepth == 0 && needsFlush {
            needsFlush = false
            guard let channel = transport.channel else {
                // (No socket left for datagrams taken this turn: they cannot go out.)
                if !datagramOutbox.isEmpty { failDatagramOutbox(.posix(ENOTCONN)) }
                if !uncopiedSends.isEmpty { failUncopiedSends(.posix(ENOTCONN)) }
                return
            }
            writeDatagramOutbox(to: channel, transport: transport)
            if !uncopiedSends.isEmpty {
                writeUncopiedSends(to: channel, holdingRest: true)
                // (What the socket did not take of the first went to the channel, flushed now;
                // the rest wait for it there.)
                needsFlush = false
            }
            channel.flush()
            #if DEBUG
            flushCount += 1
            #endif
        }
    }

    // MARK: - State machine actions

    func perform(_ actions: [FlowStateMachine.Action]) {
        for action in actions {
            switch action {
            case .report(let state):
                publish(state)
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

    /// A new state: log it, follow the path while waiting, open or close the send budget, and
    /// hand it to the state handler.
    private func publish(_ state: FlowConnectionState) {
        NetworkLog.connection.debug("state \(Self.stateName(state))", metadata: stateMetadata(state))
        if case .waiting = state { watchPathWhileWaiting() } else { setup?.pathWatch = nil }
        defer { updateReadArming() }
        if state == .ready {
            report.readyTime = .now()
            setup = nil
        }
        // The send budget opens (sends may complete on the sender's thread) only once the
        // `ready` update has been handed on, so no completion can overtake it; it closes
        // before any other state is.
        // (Not for a stream above framers: its sends are the framed kind, outside the budget.)
        let stream = receives.mode == .stream && !isFramed
        let budgetOpen = stream && state == .ready && !sendPath.writeClosed
        if stream && !budgetOpen { mailbox.budget { $0.setOpen(false) } }
        stateHandler?(state)
        if budgetOpen {
            mailbox.budget { $0.setOpen(true) }
            armDirectWritesIfIdle()
        }
        if state == .cancelled { stateHandler = nil }
    }

    private func failPending(_ error: FlowError) {
        mailbox.dropReadyDatagrams()
        complete(receives.failAll(error))
        for send in sendPath.takeQueued() { finish(send, error) }
    }

    /// Whether the flow was started (or cancelled); call on its event loop.
    package var hasStarted: Bool {
        eventLoop.preconditionInEventLoop()
        return machine.state != .setup
    }
}
