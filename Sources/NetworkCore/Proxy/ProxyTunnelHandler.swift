import NIOCore

/// Runs a ``ProxyHandshake`` at the bottom of a pipeline, then takes itself out.
///
/// Flows read on demand (autoRead is off), so the handler asks for reads itself while the
/// handshake runs. Writes from the layers above are held until the tunnel is up, then sent in
/// order. On success, bytes that arrived with the proxy's answer are handed to the pipeline from
/// its head once the caller has had the chance to add its own handlers (see
/// ``ProxyTunnel/establish(on:to:via:timeout:ipVersion:)``). On failure the channel is closed:
/// the byte stream to the proxy is in an unknown state and cannot be reused.
final class ProxyTunnelHandler<Handshake: ProxyHandshake>: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case notStarted
        case handshaking
        case finished
    }

    private var handshake: Handshake
    private var state = State.notStarted
    private let promise: EventLoopPromise<Void>
    private let deadline: NIODeadline?
    private var timeout: Scheduled<Void>?
    /// Everything received from the proxy and not consumed by the handshake.
    private var inbound = ByteBuffer()
    /// Writes from above, held while the handshake runs.
    private var heldWrites: [(NIOAny, EventLoopPromise<Void>?)] = []
    private var flushHeld = false

    init(handshake: Handshake, promise: EventLoopPromise<Void>, deadline: NIODeadline?) {
        self.handshake = handshake
        self.promise = promise
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { begin(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        begin(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .handshaking = state else {
            context.fireChannelRead(data)
            return
        }
        var bytes = Self.unwrapInboundIn(data)
        inbound.writeBuffer(&bytes)
        advance(context: context, with: { handshake, buffer in handshake.received(&buffer) })
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        switch state {
        case .handshaking:
            // Nothing above has seen a read yet; keep reading until the proxy has answered.
            context.read()
        case .notStarted, .finished:
            context.fireChannelReadComplete()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshaking = state, let event = event as? ChannelEvent, event == .inputClosed {
            fail(.closedDuringHandshake, context: context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .handshaking = state {
            fail(.closedDuringHandshake, context: context)
        } else if case .notStarted = state {
            fail(.closedDuringHandshake, context: context)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard case .finished = state else {
            finishWithFailure(error, context: context)
            return
        }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .finished = state else {
            heldWrites.append((data, promise))
            return
        }
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        guard case .finished = state else {
            flushHeld = true
            return
        }
        context.flush()
    }

    /// Sends what the layers above wrote during the handshake, then leaves.
    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        let writes = heldWrites
        heldWrites = []
        for (data, writePromise) in writes { context.write(data, promise: writePromise) }
        if flushHeld || !writes.isEmpty { context.flush() }
        flushHeld = false
        context.leavePipeline(removalToken: removalToken)
    }

    private func begin(context: ChannelHandlerContext) {
        guard case .notStarted = state else { return }
        state = .handshaking
        if let deadline {
            timeout = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
                guard let self, case .handshaking = self.state else { return }
                self.fail(.timedOut, context: context)
            }
        }
        advance(context: context, with: { handshake, _ in handshake.start() })
        if case .handshaking = state { context.read() }
    }

    /// Feeds one event to the handshake and performs its actions until it waits or ends.
    private func advance(
        context: ChannelHandlerContext, with event: (inout Handshake, inout ByteBuffer) -> ProxyHandshakeAction
    ) {
        var action = event(&handshake, &inbound)
        while true {
            switch action {
            case .write(let bytes):
                context.writeAndFlush(Self.wrapOutboundOut(bytes), promise: nil)
                guard inbound.readableBytes > 0 else { return }
                action = handshake.received(&inbound)
            case .waitForData:
                return
            case .established:
                succeed(context: context)
                return
            case .failed(let error):
                fail(error, context: context)
                return
            }
        }
    }

    private func succeed(context: ChannelHandlerContext) {
        state = .finished
        timeout?.cancel()
        timeout = nil
        let pipeline = context.pipeline
        let leftover = inbound
        inbound = ByteBuffer()
        pipeline.syncOperations.removeHandler(context: context, promise: nil)
        // Callbacks on the future run right here (it is completed on the event loop), which is
        // where the caller puts TLS and the like in place; the early bytes then go through them.
        promise.succeed(())
        if leftover.readableBytes > 0 {
            pipeline.syncOperations.fireChannelRead(NIOAny(leftover))
            pipeline.syncOperations.fireChannelReadComplete()
        }
    }

    private func fail(_ error: ProxyError, context: ChannelHandlerContext) {
        finishWithFailure(error, context: context)
    }

    private func finishWithFailure(_ error: any Error, context: ChannelHandlerContext) {
        guard !isFinished else { return }
        state = .finished
        timeout?.cancel()
        timeout = nil
        inbound = ByteBuffer()
        let writes = heldWrites
        heldWrites = []
        for (_, writePromise) in writes { writePromise?.fail(error) }
        promise.fail(error)
        context.close(promise: nil)
    }

    private var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }
}
