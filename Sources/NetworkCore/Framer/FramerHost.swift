#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Logging
import NIOCore
import NetworkDNS

/// Runs one framer for one connection, between the protocol below (TCP, TLS, UDP, DTLS) and the
/// flow: bytes from below go through the framer's `handleInput` and leave upward as whole
/// messages with their metadata (`FramedMessage`); messages from the flow go through its
/// `handleOutput` and leave downward as bytes. The contracts themselves are value types
/// (`FramerInput`, `FramerOutput`); this class calls the framer and does their I/O through its
/// `link`: a NIO handler (`FramerHandler`) in a connection's pipeline, or a datagram listener's
/// peer (`PeerFramers`), which has no pipeline of its own.
///
/// The framer decides when the connection is ready (`readyFuture`): at `start`, or later with
/// `markReady` after a handshake of its own, for which the link keeps reading meanwhile
/// (`wantsReads`; reads are otherwise the flow's to ask for). Everything runs on `eventLoop`.
package final class FramerHost: @unchecked Sendable {
    /// The longest message a framer may deliver (see `FramerInput`).
    package static let defaultMaximumMessageLength = 64 << 20

    /// Where messages go up and bytes go down. Strong, though the link owns the host: the link
    /// sets itself when it takes the host (a handler once it is in a pipeline) and `finish`,
    /// which every link calls when it lets the host go, clears it. (Held weakly, the link, a NIO
    /// handler that the pipeline retains and releases for every message, carried a side table
    /// that sent each of those down the runtime's slow path, and every use was a weak load.)
    @exclusivity(unchecked) package var link: (any FramerHostLink)?
    package let eventLoop: EventLoop
    private let factory: any HostedFramerFactory
    // Loop-confined state on every message's path: `@exclusivity(unchecked)` for the reason
    // given in `Flow` (the loop serialises access; the dynamic check was measurable).
    @exclusivity(unchecked) private var framer: (any HostedFramer)?
    @exclusivity(unchecked) private var input: FramerInput<(any AnyObject & Sendable)?>
    @exclusivity(unchecked) private var output = FramerOutput()
    private let ready: EventLoopPromise<Void>
    @exclusivity(unchecked) private var isReady = false
    @exclusivity(unchecked) private var failure: FlowError?
    @exclusivity(unchecked) private var passingInputThrough = false
    @exclusivity(unchecked) private var passingOutputThrough = false
    /// Within `handleOutput`: writes join the current message's output.
    @exclusivity(unchecked) private var inOutput = false
    /// The current message is the last of its send (`parseOutput`'s `isComplete`).
    @exclusivity(unchecked) private var outputComplete = false
    /// The promises of the messages in the gathered output (`FramerOutput.gathers`).
    @exclusivity(unchecked) private var gatheredPromise = GatheredWritePromise()
    private var wakeup: Scheduled<Void>?
    private var stalledSince: NIODeadline?

    /// The peer's and our own address, for the framer's `remote` and `local`.
    package internal(set) var remoteAddress: FlowAddress?
    package internal(set) var localAddress: FlowAddress?

    /// The layer below carries datagrams: what the framer writes for one message leaves as one.
    private let writesDatagrams: Bool

    package init(
        factory: any HostedFramerFactory, eventLoop: EventLoop, writesDatagrams: Bool = false,
        maximumMessageLength: Int = FramerHost.defaultMaximumMessageLength
    ) {
        self.factory = factory
        self.eventLoop = eventLoop
        self.writesDatagrams = writesDatagrams
        self.ready = eventLoop.makePromise()
        self.input = FramerInput(maximumMessageLength: maximumMessageLength)
        self.prependedTLS = factory.tlsAbove
    }

    /// Succeeds once the framer is ready, fails if it fails first.
    package var readyFuture: EventLoopFuture<Void> { ready.futureResult }

    /// The framer's name.
    package var label: String { factory.label }

    /// Until ready, the framer's handshake needs reads the flow does not ask for yet.
    package var wantsReads: Bool { !isReady && failure == nil }

    /// Input held for the framer, parsed or not: what it costs in memory now.
    package var heldBytes: Int { input.heldBytes }

    // MARK: - What the link reports

    /// Starts the framer (once); returns when it is ready.
    package func start() -> EventLoopFuture<Void> {
        startFramer()
        return readyFuture
    }

    /// Bytes from the layer below.
    package func received(_ bytes: ByteBuffer) {
        NetworkLog.traceConnection("framer \(label) input of \(bytes.readableBytes) bytes")
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

    /// The layer below will send nothing more.
    package func inputEnded() {
        input.endOfInput()
        runInput()
    }

    /// The link below takes a byte stream (not datagrams, not another framer's messages): the
    /// framer's small writes are gathered until the link flushes (`writeGathered`).
    package func gatherOutputForByteStream() {
        guard !writesDatagrams else { return }
        output = FramerOutput(gathers: true)
    }

    /// Writes what was gathered to the layer below (the link is about to flush or close).
    package func writeGathered() {
        guard let bytes = output.takeGathered() else { return }
        let promise = gatheredPromise.take()
        guard let link else {
            promise?.fail(FlowError.posix(ENOTCONN))
            return
        }
        link.framerHost(self, write: bytes, promise: promise)
    }

    /// The layer below is gone: a framer not ready by now never will be.
    func transportClosed() {
        ready.fail(FlowError.posix(ECONNRESET))
    }

    /// A message from the flow, to go through the framer's `handleOutput` (or through as it is,
    /// before the framer started or after `passThroughOutput`).
    package func send(_ message: FramedMessage, promise: EventLoopPromise<Void>?) {
        if let failure {
            promise?.fail(failure)
            return
        }
        guard let framer, !passingOutputThrough else {
            writeGathered()
            link?.framerHost(self, write: message.bytes, promise: promise)
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
            var joined = ByteBufferAllocator().buffer(capacity: written.reduce(0) { $0 + $1.readableBytes })
            for var part in written { joined.writeBuffer(&part) }
            written = [joined]
        }
        if dropped > 0 {
            NetworkLog.connection.debug("framer \(label) left \(dropped) bytes of a message unwritten (dropped)")
        }
        if output.gatheredBytes > 0 {
            // The message ends in the gathered run: done when that is written.
            for bytes in written { link?.framerHost(self, write: bytes, promise: nil) }
            gatheredPromise.add(promise)
            return
        }
        guard let last = written.last else {
            promise?.succeed()
            return
        }
        for bytes in written.dropLast() { link?.framerHost(self, write: bytes, promise: nil) }
        link?.framerHost(self, write: last, promise: promise)
    }

    /// The connection is closing: the framer's `stop`.
    package func closing() {
        // A framer that wants to finish first still gets no more than the close itself:
        // cancel is the application's, and it does not wait on the framer.
        if let framer { _ = framer.stop(self) }
    }

    /// The host is done for good: the framer's `cleanup`, and nothing kept (a listener's idle
    /// peer must not hold a framer's buffers after it is gone).
    package func finish() {
        wakeup?.cancel()
        wakeup = nil
        _ = output.takeGathered()
        gatheredPromise.take()?.fail(FlowError.posix(ECANCELED))
        if let framer {
            self.framer = nil
            framer.cleanup(self)
        }
        input = FramerInput(maximumMessageLength: input.maximumMessageLength)
        ready.fail(FlowError.posix(ECANCELED))
        link = nil
    }

    // MARK: - What the framer calls (on the loop)

    /// `parseInput`.
    package func parseInput(minimum: Int, maximum: Int, _ body: (UnsafeMutableRawBufferPointer?, Bool) -> Int) -> Bool {
        input.parse(minimum: minimum, maximum: maximum, body)
    }

    /// `deliverInput`: a message (or part) of the framer's own bytes.
    package func deliverInput(_ data: Data, message: (any AnyObject & Sendable)?, isComplete: Bool) {
        deliverInput(ByteBuffer(bytes: data), message: message, isComplete: isComplete)
    }

    /// `deliverInput` for bytes already in a buffer (the built-in framers).
    package func deliverInput(_ bytes: ByteBuffer, message: (any AnyObject & Sendable)?, isComplete: Bool) {
        do {
            if let whole = try input.deliver(bytes, message: message, isComplete: isComplete) { deliver(whole) }
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
        if inOutput {
            output.write(bytes: data)
        } else {
            writeOutput(ByteBuffer(bytes: data))
        }
    }

    /// `writeOutput` for bytes already in a buffer (the built-in framers).
    package func writeOutput(_ bytes: ByteBuffer) {
        guard bytes.readableBytes > 0 else { return }
        if inOutput {
            output.write(bytes)
        } else if let link, failure == nil {
            writeGathered()
            link.framerHost(self, write: bytes, promise: nil)
            link.framerHostFlush(self)
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

    /// TLS the framer put above itself (`prependApplicationProtocol`): it runs over the
    /// framer once the framer is ready, and the connection is ready after its handshake.
    package private(set) var prependedTLS: FlowTLSConfiguration?

    /// `prependApplicationProtocol` with TLS. Only before `markReady` (the protocol above starts
    /// when the framer is ready), once, and over a byte stream (TLS over datagrams would be
    /// DTLS): the error says why not, nil when it was added.
    package func prepend(tls settings: FlowTLSConfiguration) -> FlowError? {
        guard !isReady, failure == nil else { return .posix(EINVAL) }
        guard !writesDatagrams, prependedTLS == nil else { return .posix(EOPNOTSUPP) }
        prependedTLS = settings
        return nil
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
        guard link != nil else { return }
        let box = UncheckedBox(body)
        eventLoop.execute { box.value() }
    }

    /// `scheduleWakeup`: `wakeup` in `milliseconds` (nil: never; cancels the one pending).
    package func scheduleWakeup(milliseconds: UInt64?) {
        wakeup?.cancel()
        wakeup = nil
        guard let milliseconds, link != nil else { return }
        wakeup = eventLoop.scheduleTask(in: .milliseconds(Int64(clamping: milliseconds))) { [weak self] in
            guard let self, let framer = self.framer, self.failure == nil else { return }
            self.wakeup = nil
            framer.wakeup(self)
        }
    }

    // MARK: - Inside

    /// Makes and starts the framer, once, if it has a link to work through.
    package func startFramer() {
        guard framer == nil, failure == nil, let link else { return }
        let made = factory.makeFramer(host: self)
        framer = made
        if made.start(self) {
            markReady()
        } else if !isReady {
            link.framerHostWantsRead(self)
        }
        runInput()
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
        link?.framerHost(self, deliver: message)
    }

    private func deliver(_ delivery: FramerInput<(any AnyObject & Sendable)?>.Delivery) {
        deliver(FramedMessage(bytes: delivery.bytes, metadata: delivery.message))
    }

    private func fail(_ error: any Error) {
        guard failure == nil else { return }
        let flowError = FlowError(error)
        failure = flowError
        _ = output.takeGathered()
        gatheredPromise.take()?.fail(flowError)
        NetworkLog.connection.debug("framer \(label) failed: \(flowError.logDescription)")
        ready.fail(flowError)
        link?.framerHost(self, failed: flowError)
    }
}

/// Carries a closure that is not `Sendable` to the event loop it will run on (the framer's
/// `async` is called on that loop and runs there).
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension FramerHost: InboundStackLayer {
    /// Starts the framer of an inbound connection; ready when the framer is.
    package func startLayer() -> EventLoopFuture<StackLayerFacts> {
        start().map { StackLayerFacts() }
    }
}
