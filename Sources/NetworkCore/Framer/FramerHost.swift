#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging
import NIOCore
import NetworkDNS

/// Runs one application framer in a connection's pipeline, between the protocol below (TCP, TLS)
/// and the flow: bytes from below go through the framer's `handleInput` and leave upward as
/// whole messages with their metadata (`FramedMessage`); messages from the flow go through its
/// `handleOutput` and leave downward as bytes. The contracts themselves are value types
/// (`FramerInput`, `FramerOutput`); this class performs their I/O and calls the framer.
///
/// The framer decides when the connection is ready (`readyFuture`): at `start`, or later with
/// `markReady` after a handshake of its own, for which the host keeps reading meanwhile (reads
/// are otherwise the flow's to ask for). Everything runs on the channel's event loop.
package final class FramerHost: ChannelDuplexHandler, InboundStackLayer, @unchecked Sendable {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = FramedMessage
    package typealias OutboundIn = FramedMessage
    package typealias OutboundOut = ByteBuffer

    /// The longest message a framer may deliver (see `FramerInput`).
    package static let defaultMaximumMessageLength = 64 << 20

    private let factory: any HostedFramerFactory
    private var framer: (any HostedFramer)?
    private var input: FramerInput<(any AnyObject & Sendable)?>
    private var output = FramerOutput()
    private var context: ChannelHandlerContext?
    private let ready: EventLoopPromise<Void>
    private var isReady = false
    private var failure: FlowError?
    private var passingInputThrough = false
    private var passingOutputThrough = false
    /// Within `handleOutput`: writes join the current message's output.
    private var inOutput = false
    /// The current message is the last of its send (`parseOutput`'s `isComplete`).
    private var outputComplete = false
    private var wakeup: Scheduled<Void>?
    private var stalledSince: NIODeadline?

    /// The peer's and our own address, for the framer's `remote` and `local`.
    package private(set) var remoteAddress: FlowAddress?
    package private(set) var localAddress: FlowAddress?

    /// Starts the framer as soon as it is in an active pipeline (false: when `start` is called).
    private let startsAtOnce: Bool
    /// The layer below carries datagrams: what the framer writes for one message leaves as one.
    private let writesDatagrams: Bool

    /// `startsAtOnce` false keeps the framer unstarted (its input buffered) until `start`: a
    /// listener's connection starts its framers when the application starts it, after TLS.
    package init(
        factory: any HostedFramerFactory, eventLoop: EventLoop, startsAtOnce: Bool = true, writesDatagrams: Bool = false,
        maximumMessageLength: Int = FramerHost.defaultMaximumMessageLength
    ) {
        self.factory = factory
        self.startsAtOnce = startsAtOnce
        self.writesDatagrams = writesDatagrams
        self.ready = eventLoop.makePromise()
        self.input = FramerInput(maximumMessageLength: maximumMessageLength)
    }

    /// Succeeds once the framer is ready, fails if it fails first.
    package var readyFuture: EventLoopFuture<Void> { ready.futureResult }

    /// The framer's name.
    package var label: String { factory.label }

    // MARK: - Pipeline events

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        remoteAddress = context.channel.remoteAddress.map(FlowAddress.init)
        localAddress = context.channel.localAddress.map(FlowAddress.init)
        if startsAtOnce && context.channel.isActive { startFramer() }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        finishFramer()
        self.context = nil
        ready.fail(FlowError.posix(ECANCELED))
    }

    package func channelActive(context: ChannelHandlerContext) {
        if startsAtOnce { startFramer() }
        context.fireChannelActive()
    }

    /// Starts a framer made with `startsAtOnce` false; returns when it is ready.
    package func startLayer() -> EventLoopFuture<StackLayerFacts> {
        startFramer()
        return readyFuture.map { StackLayerFacts() }
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = Self.unwrapInboundIn(data)
        NetworkLog.connection.trace("framer \(label) input of \(bytes.readableBytes) bytes")
        guard failure == nil else { return }
        if passingInputThrough {
            deliver(FramedMessage(bytes: bytes, metadata: nil))
            return
        }
        do {
            if let whole = try input.append(bytes) { deliver(whole) }
        } catch {
            fail(error)
            return
        }
        runInput()
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        // Until ready, the framer's handshake needs the reads the flow does not ask for yet.
        if !isReady && failure == nil { context.read() }
        context.fireChannelReadComplete()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            input.endOfInput()
            runInput()
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        input.endOfInput()
        runInput()
        ready.fail(FlowError.posix(ECONNRESET))
        context.fireChannelInactive()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let message = Self.unwrapOutboundIn(data)
        if let failure {
            promise?.fail(failure)
            return
        }
        guard let framer, !passingOutputThrough else {
            context.write(Self.wrapOutboundOut(message.bytes), promise: promise)
            return
        }
        output.begin(message.bytes)
        inOutput = true
        outputComplete = message.isComplete
        framer.handleOutput(self, message: message.metadata, length: message.bytes.readableBytes, isComplete: message.isComplete)
        inOutput = false
        var (written, dropped) = output.finish()
        if writesDatagrams && written.count > 1 {
            // A header and a body written apart are still one datagram.
            var joined = context.channel.allocator.buffer(capacity: written.reduce(0) { $0 + $1.readableBytes })
            for var part in written { joined.writeBuffer(&part) }
            written = [joined]
        }
        if dropped > 0 {
            NetworkLog.connection.debug("framer \(label) left \(dropped) bytes of a message unwritten (dropped)")
        }
        guard let last = written.last else {
            promise?.succeed()
            return
        }
        for bytes in written.dropLast() { context.write(Self.wrapOutboundOut(bytes), promise: nil) }
        context.write(Self.wrapOutboundOut(last), promise: promise)
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all, let framer {
            // A framer that wants to finish first still gets no more than the close itself:
            // cancel is the application's, and it does not wait on the framer.
            _ = framer.stop(self)
        }
        context.close(mode: mode, promise: promise)
    }

    // MARK: - What the framer calls (on the loop)

    /// `parseInput`.
    package func parseInput(minimum: Int, maximum: Int, _ body: (UnsafeMutableRawBufferPointer?, Bool) -> Int) -> Bool {
        input.parse(minimum: minimum, maximum: maximum, body)
    }

    /// `deliverInput`: a message (or part) of the framer's own bytes.
    package func deliverInput(_ data: Data, message: (any AnyObject & Sendable)?, isComplete: Bool) {
        do {
            if let whole = try input.deliver(ByteBuffer(bytes: data), message: message, isComplete: isComplete) { deliver(whole) }
        } catch {
            fail(error)
        }
    }

    /// `deliverInputNoCopy`: the next `length` input bytes are a message (or part); false when
    /// they are not all there yet (they are delivered as they come).
    package func deliverInputNoCopy(length: Int, message: (any AnyObject & Sendable)?, isComplete: Bool) -> Bool {
        do {
            let (whole, immediate) = try input.deliver(length: length, message: message, isComplete: isComplete)
            if let whole { deliver(whole) }
            return immediate
        } catch {
            fail(error)
            return false
        }
    }

    /// `passThroughInput`: from now on input goes up as it comes, unparsed.
    package func passThroughInput() {
        passingInputThrough = true
        let rest = input.takeBuffered()
        if rest.readableBytes > 0 { deliver(FramedMessage(bytes: rest, metadata: nil)) }
    }

    /// `parseOutput`.
    package func parseOutput(minimum: Int, maximum: Int, _ body: (UnsafeMutableRawBufferPointer?, Bool) -> Int) -> Bool {
        output.parse(minimum: minimum, maximum: maximum, isComplete: outputComplete, body)
    }

    /// `writeOutput`: within `handleOutput` it joins the message's output; elsewhere (a
    /// handshake in `start`, a wake-up) it is written at once.
    package func writeOutput(_ data: Data) {
        guard !data.isEmpty else { return }
        let bytes = ByteBuffer(bytes: data)
        if inOutput {
            output.write(bytes)
        } else if let context, failure == nil {
            context.writeAndFlush(Self.wrapOutboundOut(bytes), promise: nil)
        }
    }

    /// `writeOutputNoCopy`: the next `length` bytes of the message being sent.
    package func writeOutputNoCopy(length: Int) throws(FlowError) {
        guard inOutput else { throw .posix(EINVAL) }
        try output.writeNoCopy(length: length)
    }

    /// `passThroughOutput`: from now on messages are written as they are.
    package func passThroughOutput() {
        passingOutputThrough = true
    }

    /// `markReady`.
    package func markReady() {
        guard !isReady, failure == nil else { return }
        isReady = true
        ready.succeed()
    }

    /// `markFailed`: the connection fails with `error` (ECONNABORTED when the framer gives none).
    package func markFailed(_ error: FlowError?) {
        fail(error ?? .posix(ECONNABORTED))
    }

    /// `async`: runs `body` on the framer's loop, after the current call returns.
    package func async(_ body: @escaping () -> Void) {
        guard let context else { return }
        let box = UncheckedBox(body)
        context.eventLoop.execute { box.value() }
    }

    /// `scheduleWakeup`: `wakeup` in `milliseconds` (nil: never; cancels the one pending).
    package func scheduleWakeup(milliseconds: UInt64?) {
        wakeup?.cancel()
        wakeup = nil
        guard let milliseconds, let context else { return }
        wakeup = context.eventLoop.scheduleTask(in: .milliseconds(Int64(clamping: milliseconds))) { [weak self] in
            guard let self, let framer = self.framer, self.failure == nil else { return }
            self.wakeup = nil
            framer.wakeup(self)
        }
    }

    // MARK: - Inside

    private func startFramer() {
        guard framer == nil, failure == nil, let context else { return }
        let made = factory.makeFramer(host: self)
        framer = made
        if made.start(self) {
            markReady()
        } else if !isReady {
            context.read()
        }
        runInput()
    }

    private func finishFramer() {
        wakeup?.cancel()
        wakeup = nil
        if let framer {
            self.framer = nil
            framer.cleanup(self)
        }
    }

    /// Asks the framer to handle input for as long as it makes progress.
    private func runInput() {
        guard let framer else { return }
        while input.wantsFramer && failure == nil && !passingInputThrough {
            let before = input.bufferedBytes
            input.framerNeeds(framer.handleInput(self))
            if input.bufferedBytes == before {
                noteStall()
                return
            }
        }
        stalledSince = nil
    }

    /// A framer that keeps asking for bytes that do not come: a debug line says what it waits
    /// for (once per stall), so a connection that hangs on its framer can be told apart.
    private func noteStall() {
        guard stalledSince == nil else { return }
        stalledSince = .now()
        NetworkLog.connection.debug(
            "framer \(label) waits for more input (\(input.bufferedBytes) bytes buffered\(input.ended ? ", input ended" : ""))")
    }

    private func deliver(_ message: FramedMessage) {
        context?.fireChannelRead(Self.wrapInboundOut(message))
    }

    private func deliver(_ delivery: FramerInput<(any AnyObject & Sendable)?>.Delivery) {
        deliver(FramedMessage(bytes: delivery.bytes, metadata: delivery.message))
    }

    private func fail(_ error: any Error) {
        guard failure == nil else { return }
        let flowError = FlowError(error)
        failure = flowError
        NetworkLog.connection.debug("framer \(label) failed: \(flowError.logDescription)")
        ready.fail(flowError)
        guard let context else { return }
        context.fireErrorCaught(flowError)
        context.close(promise: nil)
    }
}

/// Carries a closure that is not `Sendable` to the event loop it will run on (the framer's
/// `async` is called on that loop and runs there).
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
