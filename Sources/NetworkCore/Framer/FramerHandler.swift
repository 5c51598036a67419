#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import NIOCore
import NetworkDNS

/// A `FramerHost` in a connection's NIO pipeline, between the protocol below (TCP, a proxy's
/// tunnel, TLS, or datagrams made bytes by `DatagramPayloads`) and the flow's handler. Framers
/// stack: one over another takes the messages of the one below as its input bytes, and what it
/// writes goes down as messages (without metadata) to the one below.
final class FramerHandler: ChannelDuplexHandler, FramerHostLink, FlowMessageLayer, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = FramedMessage
    typealias OutboundIn = FramedMessage
    typealias OutboundOut = ByteBuffer

    let host: FramerHost
    /// Starts the framer as soon as it is in an active pipeline (false: when `host.start()` is
    /// called: a listener's connection starts its framers when the application starts it,
    /// after TLS; bytes that come before are kept for them).
    private let startsAtOnce: Bool
    /// Above is a layer that takes bytes (another framer, or TLS the framer prepended), or
    /// below one that takes messages (another framer).
    private var bytesAbove: Bool
    private let framerBelow: Bool
    private var context: ChannelHandlerContext?
    /// The channel, kept while in the pipeline (asking the context for it retains it, per
    /// message).
    private var channel: Channel?
    /// The flow's handler right above, when this is the top framer (`FlowMessageLayer`):
    /// messages go to it in a direct call, not through the pipeline.
    private var receiver: (any FramedMessageReceiver)?
    /// The buffer the application's messages sent from the loop are copied into
    /// (`send(copying:metadata:)`), kept for the next: once the framer has written a small
    /// message out (into its gathered output), nothing else holds it, and the next message
    /// reuses it without an allocation (else copy-on-write gives that one fresh storage).
    private var outgoing: ByteBuffer?
    /// Messages longer than this get a buffer of their own, not kept.
    private static var outgoingKept: Int { 2048 }

    init(_ host: FramerHost, startsAtOnce: Bool = true, framerAbove: Bool = false, framerBelow: Bool = false) {
        self.host = host
        self.startsAtOnce = startsAtOnce
        self.bytesAbove = framerAbove
        self.framerBelow = framerBelow
        if !framerBelow { host.gatherOutputForByteStream() }
    }

    /// Handlers for `hosts` (bottom first), each knowing whether a framer is above or below it.
    static func stack(_ hosts: [FramerHost], startsAtOnce: Bool = true) -> [FramerHandler] {
        hosts.indices.map { index in
            FramerHandler(
                hosts[index], startsAtOnce: startsAtOnce, framerAbove: index + 1 < hosts.count, framerBelow: index > 0)
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        channel = context.channel
        // (Linked from here to `handlerRemoved`, whose `finish` unlinks: a handler that never
        // joins a pipeline leaves no cycle with its host.)
        host.link = self
        host.remoteAddress = context.channel.remoteAddress.map(FlowAddress.init)
        host.localAddress = context.channel.localAddress.map(FlowAddress.init)
        if startsAtOnce && context.channel.isActive { host.startFramer() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        host.finish()
        self.context = nil
        channel = nil
        receiver = nil
        outgoing = nil
    }

    // MARK: - FlowMessageLayer

    func send(_ message: FramedMessage, promise: EventLoopPromise<Void>?) {
        host.send(message, promise: promise)
    }

    func send(copying data: Data, metadata: (any AnyObject & Sendable)?) {
        guard data.count <= Self.outgoingKept else {
            return host.send(FramedMessage(copying: data, metadata: metadata), promise: nil)
        }
        var bytes = outgoing ?? ByteBufferAllocator().buffer(capacity: data.count)
        // (Let go first: with the field still holding it, `clear()` would see the storage
        // shared and allocate every time.)
        outgoing = nil
        bytes.clear()
        bytes.writeBytes(data)
        outgoing = bytes
        host.send(FramedMessage(bytes: bytes, metadata: metadata), promise: nil)
    }

    func deliverMessages(to receiver: any FramedMessageReceiver) {
        self.receiver = receiver
    }

    /// A byte-stream protocol goes in right above (TLS the framer prepended): messages go up
    /// through the pipeline as bytes from now on, no longer to the flow's handler.
    func carryByteStreamAbove() {
        bytesAbove = true
        receiver = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        if startsAtOnce { host.startFramer() }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        host.received(Self.unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if host.wantsReads { context.read() }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { host.inputEnded() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        host.inputEnded()
        host.transportClosed()
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        host.send(Self.unwrapOutboundIn(data), promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        host.writeGathered()
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        host.writeGathered()
        if mode == .all { host.closing() }
        context.close(mode: mode, promise: promise)
    }

    // MARK: - FramerHostLink

    func framerHost(_ host: FramerHost, deliver message: FramedMessage) {
        guard let context else { return }
        if let receiver, let channel {
            receiver.receive(framed: message, channel: channel)
        } else {
            context.fireChannelRead(bytesAbove ? NIOAny(message.bytes) : Self.wrapInboundOut(message))
        }
    }

    func framerHost(_ host: FramerHost, write bytes: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(FlowError.posix(ENOTCONN))
            return
        }
        context.write(framerBelow ? NIOAny(FramedMessage(bytes: bytes, metadata: nil)) : Self.wrapOutboundOut(bytes), promise: promise)
    }

    func framerHostFlush(_ host: FramerHost) {
        context?.flush()
    }

    func framerHostWantsRead(_ host: FramerHost) {
        context?.read()
    }

    func framerHost(_ host: FramerHost, failed error: FlowError) {
        guard let context else { return }
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}
