#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NetworkDNS

/// Runs one `QUICConnectionBinding` on a datagram channel connected to the peer: datagrams that
/// arrive go to ngtcp2, the packets it makes go out (flushed once per read burst or operation),
/// its timer is kept armed, and the socket is read all the time (acknowledgements and timers
/// must not wait for the application). Everything runs on the channel's loop.
///
/// Three uses: with `onEvent`, the owner sees the binding's events and calls the operations
/// (`openStream`, `send`, `consumed`, `verified`, `close`) itself; with `bridgingOneStream`,
/// the handler carries one bidirectional stream for the flow handler above it as a byte
/// stream (`QUICStreamBridge`):
/// `ByteBuffer` reads and writes, `ChannelEvent.inputClosed` at the peer's FIN, `close(mode:
/// .output)` for this side's FIN, and `handshake` completed once the peer is verified; with
/// `bridgingDatagrams`, it carries the connection's QUIC datagrams instead, one `ByteBuffer`
/// per datagram each way (`QUICDatagramBridge`).
final class QUICDatagramHandler: ChannelDuplexHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    typealias BindingFactory = (_ local: SocketAddress, _ remote: SocketAddress, _ now: UInt64) throws(FlowError) -> QUICConnectionBinding

    private let makeBinding: BindingFactory
    private(set) var binding: QUICConnectionBinding?
    private var context: ChannelHandlerContext?
    private var remote: SocketAddress?
    /// How the packets reach the socket.
    private let writer = DatagramWriter()
    private var timer: Scheduled<Void>?
    private var timerDeadline: UInt64?
    /// Set while the binding is driven: operations called meanwhile (by the event handler) are
    /// written out by the running pass, not recursively.
    private var driving = false
    /// `drive` was asked for during a pass.
    private var driveAgain = false
    private var finished = false
    private let onEvent: ((QUICEvent) -> Void)?
    /// Bridging mode: the stream's state, and the handshake's promise until it completes.
    private var bridge: QUICStreamBridge?
    /// A graceful close waiting for the stream's bytes to be acknowledged (`lingerTime` at most).
    private var lingerTimer: Scheduled<Void>?
    /// Bridging mode, 0-RTT: what the server answered on the early stream before the handshake
    /// was done (the bridge takes the stream once it is).
    private var earlyAnswers: [(bytes: ByteBuffer, isFinal: Bool)] = []
    /// Bridging mode opens a unidirectional stream.
    private var bridgesUnidirectional = false
    /// Datagram bridging mode: the datagrams' state.
    private var datagramBridge: QUICDatagramBridge?
    private var handshake: EventLoopPromise<TLSSessionFacts>?
    private var closePromise: EventLoopPromise<Void>?
    /// The application error a close of the connection sends (CONNECTION_CLOSE), set through
    /// the QUIC metadata; none by default.
    var closeError: (code: UInt64, reason: String?) = (0, nil)
    /// A connection group's streams, when this handler carries one (event mode).
    var multiplexer: QUICStreamMultiplexer?
    /// Called after each pass that wrote packets, so an owner can complete its writes.
    var afterEachPass: (() -> Void)?
    /// Client, on a socket bound to the wildcard: follows the paths (`followPaths`).
    private(set) var pathFollower: QUICPathFollower?

    /// The owner handles the events.
    init(binding makeBinding: @escaping BindingFactory, onEvent: @escaping (QUICEvent) -> Void) {
        self.makeBinding = makeBinding
        self.onEvent = onEvent
    }

    /// The handler carries one stream for the flow above it; `handshake` completes with the
    /// session's facts once the connection is established and the stream open.
    /// With `unidirectional`, the stream is one this side only sends on: its input is at its end
    /// from the start.
    init(
        bridgingOneStream makeBinding: @escaping BindingFactory, unidirectional: Bool = false,
        handshake: EventLoopPromise<TLSSessionFacts>
    ) {
        self.makeBinding = makeBinding
        self.onEvent = nil
        self.bridge = QUICStreamBridge()
        self.bridgesUnidirectional = unidirectional
        self.handshake = handshake
    }

    /// The handler carries the connection's datagrams for the flow above; `handshake` completes
    /// once the connection is established and the peer takes datagrams (else it fails with
    /// `EPROTONOSUPPORT`).
    init(bridgingDatagrams makeBinding: @escaping BindingFactory, handshake: EventLoopPromise<TLSSessionFacts>) {
        self.makeBinding = makeBinding
        self.onEvent = nil
        self.datagramBridge = QUICDatagramBridge()
        self.handshake = handshake
    }

    /// In event mode, the flow above (a connection group's) sends and receives the connection's
    /// datagrams through this handler, as in datagram bridging mode; the other events still go
    /// to the owner.
    func carryDatagrams() {
        if datagramBridge == nil { datagramBridge = QUICDatagramBridge() }
    }

    /// Packets go straight to `descriptor`, the channel's socket (opened outside NIO), rather
    /// than through NIO's write path. Call on the loop while the channel is active, before the
    /// handler is added.
    func writeDirectly(to descriptor: Int32) {
        writer.writeDirectly(to: descriptor)
    }

    /// Client, after the handler is added, on a socket bound to the wildcard whose packets go
    /// straight to it: whenever the machine's interfaces or routes change, asks the kernel which
    /// source address the route to the server now takes, and when it is no longer the socket's,
    /// moves the socket there and the connection with it (RFC 9000 §9: ngtcp2 validates the new
    /// path and goes on with new connection IDs).
    func followPaths() {
        guard pathFollower == nil, let context, let local = context.channel.localAddress else { return }
        let loop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: loop)
        pathFollower = QUICPathFollower(local: local) {
            loop.execute { handler.value.routeMayHaveChanged() }
        }
    }

    private func routeMayHaveChanged() {
        guard !finished, let binding, binding.canMigrate, let remote, let follower = pathFollower else { return }
        // The probe costs a socket; a move costs the port and a path validation.
        guard let source = SourceAddressProbe.source(for: remote, interfaceIndex: nil),
            source.ipAddress != follower.local.ipAddress,
            let moved = writer.reconnect(to: remote), moved != follower.local
        else { return }
        let previous = follower.local
        follower.local = moved
        let status = binding.migrate(to: moved, now: Self.now())
        if status == 0 {
            NetworkLog.quic.debug("moved to a new path: \(previous.logText) → \(moved.logText)")
            follower.onMove?(moved)
        } else {
            // The socket moved all the same: to the server, that looks like a NAT rebinding,
            // which it validates itself.
            NetworkLog.quic.debug("ngtcp2 refused to migrate (\(status)); the socket left \(previous.logText) for \(moved.logText)")
        }
        drive()
    }

    /// ngtcp2's clock: the loop's monotonic clock in nanoseconds.
    static func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard binding == nil, !finished else { return }
        guard let local = context.channel.localAddress, let remote = context.channel.remoteAddress else {
            end(.posix(ENOTCONN))
            return
        }
        self.remote = remote
        Self.enableReceiveOffload(on: context.channel)
        do {
            binding = try makeBinding(local, remote, Self.now())
        } catch {
            end(error)
            return
        }
        binding?.segmentsPackets = writer.segments
        writer.toleratesRefusals = binding?.role.isClient == false
        // The socket is read all the time, whatever the flow above asks for.
        context.read()
        drive()
    }

    /// Datagrams read per loop turn before the packets they call for are written: a burst's
    /// acknowledgements then leave together.
    static let datagramsPerRead: UInt = 16

    /// Reads more datagrams per loop turn, with their ECN codepoints (for ngtcp2's ECN
    /// validation and congestion signals), and bursts of them as one buffer where the system can
    /// (`DatagramReceiveOffload`).
    private static func enableReceiveOffload(on channel: Channel) {
        guard let options = channel.syncOptions else { return }
        try? options.setOption(ChannelOptions.maxMessagesPerRead, value: datagramsPerRead)
        ECNCodepoint.enableReading(on: channel)
        DatagramReceiveOffload.enable(on: channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        // With a segment size, several datagrams the kernel coalesced: each but the last is that
        // long, as in a batch sent with `UDP_SEGMENT`.
        let now = Self.now()
        let ecn = ECNCodepoint.codepoint(envelope.metadata?.ecnState)
        DatagramBatch(bytes: envelope.data, segmentSize: envelope.metadata?.segmentSize).forEachPacket { datagram in
            binding?.receive(datagram, from: envelope.remoteAddress, ecn: ecn, now: now)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        drive()
        if !finished { context.read() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // (The duplicate would keep the socket open.)
        writer.release()
        end(.posix(ECONNABORTED))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP port unreachable on a connected socket: nobody answers there. A server's client
        // may have moved on, and its old address refuses what was still sent there (a forged
        // ICMP message could end the connection too): the idle timeout judges a server's client.
        if let error = error as? IOError, error.errnoCode == ECONNREFUSED, writer.toleratesRefusals { return }
        if let error = error as? IOError {
            end(.posix(error.errnoCode))
        } else {
            end(.posix(EIO))
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        writer.release()
        pathFollower?.cancel()
        pathFollower = nil
        timer?.cancel()
        self.context = nil
    }

    // MARK: - The flow above (bridging mode)

    func read(context: ChannelHandlerContext) {
        // Not passed on: the socket is read anyway. A read releases what the stream buffered.
        if datagramBridge != nil {
            datagramBridge?.readRequestedByFlow()
            deliverDatagramsToFlow(context)
            return
        }
        guard bridge != nil else { return }
        bridge?.readRequestedByFlow()
        // Bytes the flow takes now widen the peer's window: the update must leave now, as a
        // peer that used up its window sends nothing that would wake this side later.
        if deliverToFlow(context) { drive() }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = unwrapOutboundIn(data)
        if datagramBridge != nil {
            return writeDatagram(bytes, promise: promise)
        }
        guard let stream = bridge?.stream, let binding, binding.send(bytes, on: stream, fin: false) else {
            promise?.fail(FlowError.posix(finished ? ECONNABORTED : ENOTCONN))
            return
        }
        bridge?.queued(bytes.readableBytes, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        drive()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        switch mode {
        case .output where datagramBridge != nil:
            // Datagrams have no end of their own: nothing to tell the peer.
            promise?.succeed()
        case .output:
            // This side's FIN, after the bytes written before it.
            if let stream = bridge?.stream, let binding, binding.send(ByteBuffer(), on: stream, fin: true) {
                promise?.succeed()
                drive()
            } else {
                promise?.fail(ChannelError.outputClosed)
            }
        case .input:
            promise?.fail(ChannelError.operationUnsupported)
        case .all:
            guard let binding, !finished else {
                context.close(mode: mode, promise: promise)
                return
            }
            if let promise {
                if let closePromise { closePromise.futureResult.cascade(to: promise) } else { closePromise = promise }
            }
            if let stream = bridge?.stream, !binding.isDelivered(stream) {
                // CONNECTION_CLOSE would drop what the stream still has in flight (a TCP close
                // leaves it to the kernel): the close waits until the peer has it all, or the
                // linger time passed.
                lingerUntilDelivered(context)
                return
            }
            closeNow()
        }
    }

    /// How long a graceful close waits for the bridged stream's bytes to be acknowledged.
    static let lingerTime = TimeAmount.seconds(2)

    private func lingerUntilDelivered(_ context: ChannelHandlerContext) {
        guard lingerTimer == nil else { return }
        lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerTime) { [weak self] in
            NetworkLog.quic.debug("closing with stream data still unacknowledged after the linger time")
            self?.closeNow()
        }
        drive()
    }

    /// Closes the connection at once: CONNECTION_CLOSE with the close error set in the metadata
    /// (an abortive close, or the end of a graceful one).
    func closeNow() {
        lingerTimer?.cancel()
        lingerTimer = nil
        guard let binding, !finished else { return }
        binding.close(applicationError: closeError.code, reason: closeError.reason, now: Self.now())
        drive()
    }

    private func writeDatagram(_ bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let binding, !finished else {
            promise?.fail(FlowError.posix(finished ? ECONNABORTED : ENOTCONN))
            return
        }
        if let error = binding.queueDatagram(bytes) {
            if datagramBridge?.refused(error, promise: promise) != false { promise?.fail(error) }
            return
        }
        datagramBridge?.queued(promise: promise)
    }

    // MARK: - Operations (event mode, on the loop)

    /// The stream bridging mode carries, once open.
    var bridgedStreamID: Int64? { bridge?.stream }

    /// The UDP channel, while the handler is in its pipeline.
    var channel: Channel? { context?.channel }

    /// Queues bytes on a stream (and its end with `fin`) without writing yet: the owner calls
    /// `driveNow()` when its writes are flushed.
    func queue(_ bytes: ByteBuffer, on stream: Int64, fin: Bool) -> Bool {
        binding?.send(bytes, on: stream, fin: fin) ?? false
    }

    /// A datagram of this connection that reached another socket (a QUIC listener's, before
    /// this connection's own socket existed).
    func receiveForwarded(_ datagram: ByteBuffer, from source: SocketAddress, ecn: UInt8 = 0) {
        binding?.receive(datagram, from: source, ecn: ecn, now: Self.now())
        if source != remote { followPeer() }
        drive()
    }

    /// Server: told the client's new address after it moved (or was rebound), once the socket
    /// follows it.
    var onPeerMove: ((SocketAddress) -> Void)?

    /// Server, after a datagram from an address that is not the socket's peer (the listener
    /// found the connection by its ID): when ngtcp2 took it as the client's move to a new path,
    /// the socket is connected to the new address, so that the packets ngtcp2 now sends there
    /// (the path's validation first) reach it. A packet ngtcp2 dropped moves nothing.
    private func followPeer() {
        guard let binding, let remote, let current = binding.currentRemote, current != remote, !finished,
            let local = writer.reconnect(to: current)
        else { return }
        NetworkLog.quic.debug("the client moved: \(remote.logText) → \(current.logText) (this side \(local.logText))")
        self.remote = current
        onPeerMove?(current)
    }

    /// Tells the flow above (a connection group's) that the connection ended with `error`.
    func failFlowAbove(_ error: FlowError) {
        context?.fireErrorCaught(error)
    }

    /// Writes what can go now.
    func driveNow() {
        drive()
    }

    /// Runs the settings' verify block on the peer's chain, off the loop; its answer comes back
    /// to the loop (`verified`).
    func askVerifyBlock(_ chain: [[UInt8]]) {
        guard let verify = binding?.settings.verify, let loop = context?.eventLoop else { return }
        let bound = NIOLoopBound(self, eventLoop: loop)
        verify(chain) { trusted in loop.execute { bound.value.verified(trusted) } }
    }

    /// Opens a stream; nil until the handshake is done or while the peer's limit is reached.
    func openStream(bidirectional: Bool = true) -> Int64? {
        binding?.openStream(bidirectional: bidirectional)
    }

    /// Queues bytes on a stream (and its end with `fin`) and writes what can go now.
    @discardableResult
    func send(_ bytes: ByteBuffer, on stream: Int64, fin: Bool) -> Bool {
        let queued = binding?.send(bytes, on: stream, fin: fin) ?? false
        drive()
        return queued
    }

    /// The owner took `count` bytes of `stream`: the peer may send more.
    func consumed(_ count: Int, on stream: Int64) {
        binding?.consumed(count, on: stream)
        drive()
    }

    /// The settings' verify block answered.
    func verified(_ trusted: Bool) {
        binding?.verified(trusted, now: Self.now())
        drive()
    }

    /// Closes the connection (CONNECTION_CLOSE with `applicationError`), then the channel.
    func close(applicationError: UInt64 = 0) {
        binding?.close(applicationError: applicationError, now: Self.now())
        drive()
    }

    // MARK: - Driving the binding

    /// Writes what ngtcp2 has to send, delivers the events, and arms the timer; again while
    /// handling the events made more to do.
    private func drive() {
        guard !driving else {
            // Asked from inside a pass (a callback of the flow's): one more pass then.
            driveAgain = true
            return
        }
        guard let context, let binding else { return }
        driving = true
        var capped = false
        var rounds = 0
        while true {
            driveAgain = false
            capped = binding.writePackets(now: Self.now())
            flushPackets(context)
            completeWrites()
            afterEachPass?()
            let events = binding.takeEvents()
            if events.isEmpty && !driveAgain { break }
            for event in events { handle(event, context) }
            rounds += 1
            if rounds >= 16 { capped = true; break }
        }
        driving = false
        if lingerTimer != nil, let stream = bridge?.stream, binding.isDelivered(stream) {
            return closeNow()
        }
        if binding.phase == .closed {
            finish(context)
            return
        }
        if capped {
            // More than one write's worth: the rest goes on the next loop turn, after other work.
            context.eventLoop.assumeIsolated().execute { [weak self] in self?.drive() }
        }
        armTimer(context)
    }

    private func flushPackets(_ context: ChannelHandlerContext) {
        guard let remote, let binding else { return }
        let batches = binding.takeBatches()
        guard !batches.isEmpty else { return }
        if let error = writer.write(batches, to: remote, through: context) {
            end(error)
            return
        }
        binding.segmentsPackets = writer.segments
    }

    private func handle(_ event: QUICEvent, _ context: ChannelHandlerContext) {
        if case .closed = event { finished = true }
        if case .datagram = event, onEvent != nil {
            // (Always the flow's, never the owner's.)
            return bridged(event, context)
        }
        if let onEvent {
            onEvent(event)
            return
        }
        bridged(event, context)
    }

    /// An event in bridging mode, for the flow above.
    private func bridged(_ event: QUICEvent, _ context: ChannelHandlerContext) {
        switch event {
        case .established(let facts) where datagramBridge != nil:
            guard binding?.maxDatagramPayload ?? 0 > 0 else {
                // The peer announced no max_datagram_frame_size: nothing could be sent.
                NetworkLog.quic.debug("peer takes no QUIC datagrams")
                binding?.close(applicationError: 0, now: Self.now())
                failHandshake(.posix(EPROTONOSUPPORT))
                return
            }
            handshake?.succeed(facts)
            handshake = nil
        case .established(let facts):
            // (A resumed connection opened its stream before the handshake, for 0-RTT data.)
            guard let stream = binding?.earlyStream ?? binding?.openStream(bidirectional: !bridgesUnidirectional) else {
                binding?.close(applicationError: 0, now: Self.now())
                failHandshake(.posix(EPROTO))
                return
            }
            bridge?.opened(stream)
            if bridgesUnidirectional { _ = bridge?.received(ByteBuffer(), on: stream, isFinal: true) }
            for answer in earlyAnswers { _ = bridge?.received(answer.bytes, on: stream, isFinal: answer.isFinal) }
            earlyAnswers = []
            handshake?.succeed(facts)
            handshake = nil
        case .verificationNeeded(let chain):
            askVerifyBlock(chain)
        case .streamData(let stream, let bytes, let isFinal) where bridge?.stream == nil && stream == binding?.earlyStream:
            // (Bounded by the stream's window, as any received bytes are.)
            earlyAnswers.append((bytes, isFinal))
        case .streamData(let stream, let bytes, let isFinal):
            if bridge?.received(bytes, on: stream, isFinal: isFinal) == true {
                deliverToFlow(context)
            } else {
                // Streams the peer opens are not carried by a single-stream connection.
                binding?.reset(stream, applicationError: 0)
            }
        case .streamReset(let stream, _) where stream == bridge?.stream:
            context.fireErrorCaught(FlowError.posix(ECONNRESET))
        case .datagram(let datagram):
            guard datagramBridge != nil else { break }
            if datagramBridge?.received(datagram) == false, let dropped = datagramBridge?.dropped, dropped.nonzeroBitCount == 1 {
                NetworkLog.quic.debug("dropped \(dropped) QUIC datagrams the application did not read")
            }
            deliverDatagramsToFlow(context)
        case .streamOpened, .streamReset, .streamClosed, .streamsAvailable:
            break
        case .closed(let error):
            failHandshake(error ?? .posix(ECONNABORTED))
            failWrites(error ?? .posix(ECONNABORTED))
            if let error { context.fireErrorCaught(error) }
        }
    }

    /// Hands the flow what it asked for; true when it took bytes (so ngtcp2 has a wider
    /// window to announce).
    @discardableResult
    private func deliverToFlow(_ context: ChannelHandlerContext) -> Bool {
        guard let delivery = bridge?.deliver() else { return false }
        if !delivery.reads.isEmpty {
            let stream = bridge?.stream ?? -1
            var count = 0
            for bytes in delivery.reads {
                count += bytes.readableBytes
                context.fireChannelRead(wrapInboundOut(bytes))
            }
            // The flow took them: the peer may send as much again.
            binding?.consumed(count, on: stream)
            context.fireChannelReadComplete()
        }
        if delivery.inputEnded {
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
        return !delivery.reads.isEmpty
    }

    private func deliverDatagramsToFlow(_ context: ChannelHandlerContext) {
        guard let datagrams = datagramBridge?.deliver(), !datagrams.isEmpty else { return }
        for datagram in datagrams { context.fireChannelRead(wrapInboundOut(datagram)) }
        context.fireChannelReadComplete()
    }

    private func completeWrites() {
        if datagramBridge != nil, let binding {
            for (promise, error) in datagramBridge?.settled(binding.takeDatagramResults()) ?? [] {
                if let error { promise?.fail(error) } else { promise?.succeed() }
            }
            return
        }
        guard let stream = bridge?.stream, let binding else { return }
        for promise in bridge?.sent(upTo: binding.sentOffset(on: stream)) ?? [] { promise?.succeed() }
    }

    private func failHandshake(_ error: FlowError) {
        handshake?.fail(error)
        handshake = nil
    }

    private func failWrites(_ error: FlowError) {
        for promise in bridge?.abandonWrites() ?? [] { promise?.fail(error) }
        for promise in datagramBridge?.abandonWrites() ?? [] { promise?.fail(error) }
    }

    private func armTimer(_ context: ChannelHandlerContext) {
        guard let expiry = binding?.expiry else {
            timer?.cancel()
            timer = nil
            timerDeadline = nil
            return
        }
        guard expiry != timerDeadline else { return }
        timer?.cancel()
        timerDeadline = expiry
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: .uptimeNanoseconds(expiry)) { [weak self] in
            guard let self, let binding = self.binding else { return }
            self.timerDeadline = nil
            binding.handleExpiry(now: Self.now())
            self.drive()
        }
    }

    /// The connection is over: its last packets are out; the channel closes.
    private func finish(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        pathFollower?.cancel()
        lingerTimer?.cancel()
        lingerTimer = nil
        let promise = closePromise
        closePromise = nil
        context.close(promise: promise)
    }

    /// Ends before or outside the binding (no socket, setup failed, channel gone).
    private func end(_ error: FlowError) {
        guard !finished else { return }
        finished = true
        timer?.cancel()
        pathFollower?.cancel()
        // While establishing, the attempt fails through the handshake's promise.
        let established = handshake == nil
        failHandshake(error)
        failWrites(error)
        if let onEvent {
            onEvent(.closed(error))
        } else if let context, established {
            context.fireErrorCaught(error)
        }
        context?.close(promise: nil)
    }
}
