#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// One QUIC stream of a multiplexed connection as a NIO channel of its own, so that a flow runs
/// on it exactly as on a TCP socket: `ByteBuffer` reads on demand, `ChannelEvent.inputClosed` at
/// the peer's FIN, `close(mode: .output)` for this side's FIN. The bytes travel through the
/// connection's `QUICStreamMultiplexer` (NIOHTTP2's stream channels are the model). A
/// unidirectional stream is half a channel: one this side opened has its input ended from the
/// start, one the peer opened its output. Confined to the connection's event loop.
final class QUICStreamChannel: Channel, ChannelCore, @unchecked Sendable {
    let streamID: Int64
    let eventLoop: EventLoop
    let localAddress: SocketAddress?
    let remoteAddress: SocketAddress?
    let allocator = ByteBufferAllocator()
    /// Strong while the stream is open; the multiplexer drops this channel when it closes.
    private var multiplexer: QUICStreamMultiplexer?
    private let parentChannel: Channel?
    /// Made in init, once `self` exists (as NIOHTTP2's stream channels do).
    private var _pipeline: ChannelPipeline!
    private let closePromise: EventLoopPromise<Void>
    private var bridge = QUICStreamBridge()
    private var closed = false
    private var outputClosed = false
    /// The application error an abortive close (a reset) sends, set through the QUIC metadata.
    var resetCode: UInt64 = 0

    /// `openedHere`: this side opened the stream (else the peer did).
    init(stream: Int64, multiplexer: QUICStreamMultiplexer, parent: Channel, openedHere: Bool) {
        self.streamID = stream
        self.eventLoop = parent.eventLoop
        self.multiplexer = multiplexer
        self.parentChannel = parent
        self.localAddress = parent.localAddress
        self.remoteAddress = parent.remoteAddress
        self.closePromise = parent.eventLoop.makePromise()
        self.bridge.opened(stream)
        if QUICStreamChannel.isUnidirectional(stream) {
            if openedHere {
                _ = bridge.received(ByteBuffer(), on: stream, isFinal: true)
            } else {
                outputClosed = true
            }
        }
        self._pipeline = ChannelPipeline(channel: self)
    }

    /// Bit 1 of a stream id: 1 for a unidirectional stream.
    static func isUnidirectional(_ stream: Int64) -> Bool {
        stream & 0x2 != 0
    }

    /// Tells the handlers the stream is there (as a socket's registration and activation do),
    /// once the owner has set up the pipeline.
    func activate() {
        pipeline.syncOperations.fireChannelRegistered()
        pipeline.syncOperations.fireChannelActive()
    }

    // MARK: - Channel

    var pipeline: ChannelPipeline { _pipeline }
    var closeFuture: EventLoopFuture<Void> { closePromise.futureResult }
    var parent: Channel? { parentChannel }
    var isWritable: Bool { !closed }
    var isActive: Bool { !closed }
    var _channelCore: ChannelCore { self }

    func setOption<Option: ChannelOption>(_ option: Option, value: Option.Value) -> EventLoopFuture<Void> {
        // A stream has no socket options: reads are on demand and half-closure is its nature.
        eventLoop.makeSucceededVoidFuture()
    }

    func getOption<Option: ChannelOption>(_ option: Option) -> EventLoopFuture<Option.Value> {
        eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
    }

    // MARK: - ChannelCore (the pipeline's head)

    func localAddress0() throws -> SocketAddress {
        guard let localAddress else { throw ChannelError.operationUnsupported }
        return localAddress
    }

    func remoteAddress0() throws -> SocketAddress {
        guard let remoteAddress else { throw ChannelError.operationUnsupported }
        return remoteAddress
    }

    func register0(promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    func registerAlreadyConfigured0(promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    func bind0(to: SocketAddress, promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    func connect0(to: SocketAddress, promise: EventLoopPromise<Void>?) { promise?.fail(ChannelError.operationUnsupported) }
    func triggerUserOutboundEvent0(_ event: Any, promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.operationUnsupported)
    }

    func write0(_ data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = unwrapData(data, as: ByteBuffer.self)
        guard !closed, !outputClosed, let multiplexer, multiplexer.send(bytes, on: streamID, fin: false) else {
            promise?.fail(closed ? ChannelError.ioOnClosedChannel : ChannelError.outputClosed)
            return
        }
        bridge.queued(bytes.readableBytes, promise: promise)
    }

    func flush0() {
        multiplexer?.flush()
    }

    func read0() {
        guard !closed else { return }
        bridge.readRequestedByFlow()
        deliver()
    }

    func close0(error: Error, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard !closed else {
            promise?.fail(ChannelError.alreadyClosed)
            return
        }
        switch mode {
        case .output:
            // This side's FIN, after the bytes written before it.
            guard !outputClosed, let multiplexer, multiplexer.send(ByteBuffer(), on: streamID, fin: true) else {
                promise?.fail(ChannelError.outputClosed)
                return
            }
            outputClosed = true
            multiplexer.flush()
            promise?.succeed()
        case .input:
            promise?.fail(ChannelError.operationUnsupported)
        case .all:
            // Graceful: the FIN if not sent yet, and the peer asked to stop sending if it has
            // not finished (STOP_SENDING with code 0).
            multiplexer?.closeStream(streamID, finish: !outputClosed, stopReading: !bridge.inputFinished)
            outputClosed = true
            end(error: nil)
            promise?.succeed()
        }
    }

    func channelRead0(_ data: NIOAny) {}
    func errorCaught0(error: Error) {}

    // MARK: - From the multiplexer

    /// Bytes of the stream arrived (its end with `isFinal`).
    func received(_ bytes: ByteBuffer, isFinal: Bool) {
        guard !closed else { return }
        _ = bridge.received(bytes, on: streamID, isFinal: isFinal)
        deliver()
    }

    /// ngtcp2 has taken the stream's bytes up to `sentOffset`.
    func sent(upTo sentOffset: UInt64) {
        for promise in bridge.sent(upTo: sentOffset) { promise?.succeed() }
    }

    /// The stream failed (the peer reset it, or the connection ended): the flow hears why, then
    /// the channel closes.
    func failed(_ error: FlowError) {
        guard !closed else { return }
        for promise in bridge.abandonWrites() { promise?.fail(error) }
        pipeline.syncOperations.fireErrorCaught(error)
        end(error: error)
    }

    /// Resets the stream both ways (an abortive close), then closes the channel.
    func reset(applicationError: UInt64) {
        guard !closed else { return }
        multiplexer?.resetStream(streamID, applicationError: applicationError)
        end(error: nil)
    }

    private func deliver() {
        let delivery = bridge.deliver()
        if !delivery.reads.isEmpty {
            var count = 0
            for bytes in delivery.reads {
                count += bytes.readableBytes
                pipeline.syncOperations.fireChannelRead(NIOAny(bytes))
            }
            // The flow took them: the peer may send as much again.
            multiplexer?.consumed(count, on: streamID)
            pipeline.syncOperations.fireChannelReadComplete()
        }
        if delivery.inputEnded {
            pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
    }

    private func end(error: FlowError?) {
        closed = true
        let error = error ?? .posix(ECANCELED)
        for promise in bridge.abandonWrites() { promise?.fail(error) }
        multiplexer?.streamChannelClosed(streamID)
        multiplexer = nil
        pipeline.syncOperations.fireChannelInactive()
        pipeline.syncOperations.fireChannelUnregistered()
        // Handlers leave the pipeline once it is closed, breaking the flow's cycle.
        eventLoop.assumeIsolated().execute { [self] in
            removeHandlers(pipeline: pipeline)
            closePromise.succeed()
        }
    }
}
