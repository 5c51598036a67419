#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Runs one `QUICConnectionBinding` on a datagram channel connected to the peer: datagrams that
/// arrive go to ngtcp2, the packets it makes go out (flushed once per read burst or operation),
/// its timer is kept armed, and its events go to `onEvent`, on the channel's loop. Operations
/// (`openStream`, `send`, `consumed`, `reset`, `close`) are called on the loop too.
final class QUICDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let makeBinding: (_ local: SocketAddress, _ remote: SocketAddress, _ now: UInt64) throws(FlowError) -> QUICConnectionBinding
    private(set) var binding: QUICConnectionBinding?
    private var context: ChannelHandlerContext?
    private var remote: SocketAddress?
    private var timer: Scheduled<Void>?
    private var timerDeadline: UInt64?
    /// Set while events are being delivered: operations the event handler calls then are
    /// written out by the delivery loop, not recursively.
    private var delivering = false
    private var finished = false
    private let onEvent: (QUICEvent) -> Void

    init(
        binding makeBinding: @escaping (SocketAddress, SocketAddress, UInt64) throws(FlowError) -> QUICConnectionBinding,
        onEvent: @escaping (QUICEvent) -> Void
    ) {
        self.makeBinding = makeBinding
        self.onEvent = onEvent
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
        do {
            binding = try makeBinding(local, remote, Self.now())
        } catch {
            end(error)
            return
        }
        process()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        binding?.receive(envelope.data, from: envelope.remoteAddress, now: Self.now())
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        process()
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(.posix(ECONNABORTED))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP port unreachable on a connected socket: nobody answers there.
        if let error = error as? IOError {
            end(.posix(error.errnoCode))
        } else {
            end(.posix(EIO))
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        self.context = nil
    }

    // MARK: - Operations (on the loop)

    /// Opens a stream; nil until the handshake is done or while the peer's limit is reached.
    func openStream(bidirectional: Bool = true) -> Int64? {
        binding?.openStream(bidirectional: bidirectional)
    }

    /// Queues bytes on a stream (and its end with `fin`) and writes what can go now.
    @discardableResult
    func send(_ bytes: ByteBuffer, on stream: Int64, fin: Bool) -> Bool {
        let queued = binding?.send(bytes, on: stream, fin: fin) ?? false
        process()
        return queued
    }

    /// The owner took `count` bytes of `stream`: the peer may send more.
    func consumed(_ count: Int, on stream: Int64) {
        binding?.consumed(count, on: stream)
        process()
    }

    /// Resets a stream with an application error.
    func reset(_ stream: Int64, applicationError: UInt64) {
        binding?.reset(stream, applicationError: applicationError)
        process()
    }

    /// The settings' verify block answered.
    func verified(_ trusted: Bool) {
        binding?.verified(trusted, now: Self.now())
        process()
    }

    /// Closes the connection (CONNECTION_CLOSE with `applicationError`), then the channel.
    func close(applicationError: UInt64 = 0) {
        binding?.close(applicationError: applicationError, now: Self.now())
        process()
    }

    // MARK: - Driving the binding

    /// Writes what ngtcp2 has to send, delivers the events, and arms the timer; again while
    /// the events' handler made more to do.
    private func process() {
        guard !delivering, let context, let binding else { return }
        delivering = true
        var capped = false
        var rounds = 0
        while true {
            capped = binding.writePackets(now: Self.now())
            flushPackets(context)
            let events = binding.takeEvents()
            if events.isEmpty { break }
            for event in events { deliver(event) }
            rounds += 1
            if rounds >= 16 { capped = true; break }
        }
        delivering = false
        if binding.phase == .closed {
            finish(context)
            return
        }
        if capped {
            // More than one write's worth: the rest goes on the next loop turn, after other work.
            context.eventLoop.assumeIsolated().execute { [weak self] in self?.process() }
        }
        armTimer(context)
    }

    private func flushPackets(_ context: ChannelHandlerContext) {
        guard let remote else { return }
        let packets = binding?.takePackets() ?? []
        guard !packets.isEmpty else { return }
        for packet in packets {
            context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: remote, data: packet)), promise: nil)
        }
        context.flush()
    }

    private func deliver(_ event: QUICEvent) {
        if case .closed = event { finished = true }
        onEvent(event)
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
        let deadline = NIODeadline.uptimeNanoseconds(expiry)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self, let binding = self.binding else { return }
            self.timerDeadline = nil
            binding.handleExpiry(now: Self.now())
            self.process()
        }
    }

    /// The connection is over: its last packets are out; the channel closes.
    private func finish(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.close(promise: nil)
    }

    /// Ends before or outside the binding (no socket, setup failed, channel gone).
    private func end(_ error: FlowError) {
        guard !finished else { return }
        finished = true
        timer?.cancel()
        onEvent(.closed(error))
        context?.close(promise: nil)
    }
}
