#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import NIOPosix
import PeerSupport
import Testing

@testable import NetworkCore

/// Which sends of a ready plain-TCP flow go to the socket on the sender's thread
/// (docs/data-path.md, "Which thread does the work"), seen from the flow's own count.
@Suite("Core.DirectIO")
struct DirectIOTests {
    /// Echoes every byte back.
    final class Echo: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.writeAndFlush(data, promise: nil)
        }
    }

    /// A local server whose accepted connections get `handler`, and a plain-TCP flow to it, ready.
    static func readyFlow(
        _ handler: @escaping @Sendable () -> some ChannelHandler & Sendable
    ) async throws -> (Channel, Flow, Recorder<FlowConnectionState>) {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { $0.pipeline.addHandler(handler()) }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        let flow = Flow(configuration: FlowConfiguration(target: .hostPort(host: "127.0.0.1", port: port, interfaceName: nil)))
        let states = Recorder<FlowConnectionState>()
        flow.observe { states.append($0) }
        flow.start()
        try await states.wait("ready", timeout: 10) { $0.contains(.ready) }
        return (server, flow, states)
    }

    /// Sends `size` bytes once the flow is ready and waits for all of them to come back.
    static func exchange(_ flow: Flow, size: Int) async throws {
        let echoed = Recorder<Int>()
        let bytes = Data(repeating: 7, count: size)
        // (A completion hands its handler to a queue, as the facade does: it may be called
        // under the flow's lock.)
        flow.send(data: bytes, isComplete: true, closesWrite: false) { error, ticket in
            DispatchQueue.global().async { ticket.run { #expect(error == nil) } }
        }
        // Receives until the whole echo came back, and no further (the next exchange's
        // receives must get the next echo).
        @Sendable func receiveMore(left: Int) {
            flow.receive(minimum: 1, maximum: left) { outcome in
                guard case .data(let data?, _, _, _) = outcome else { return }
                echoed.append(data.count)
                if left > data.count { receiveMore(left: left - data.count) }
            }
        }
        receiveMore(left: size)
        try await echoed.wait("the echo of \(size) bytes", timeout: 10) { $0.reduce(0, +) >= size }
    }

    @Test("a small send on a ready connection goes out on the sender's thread; a bulk send through the loop")
    func smallSendsAreDirect() async throws {
        let (server, flow, states) = try await Self.readyFlow { Echo() }
        defer { server.close(promise: nil) }
        // (The loop arms direct writes right after it reported `ready`.)
        let armed = ContinuousClock.now + .seconds(10)
        while !flow.mailbox.directWritesArmed && ContinuousClock.now < armed { try await Task.sleep(for: .milliseconds(5)) }

        try await Self.exchange(flow, size: 100)
        #expect(flow.mailbox.directlyWrittenBytes == 100, "the send should have gone out on this thread")
        try await Self.exchange(flow, size: 64 * 1024)
        #expect(flow.mailbox.directlyWrittenBytes == 100, "sends over the limit go through the loop")
        // (The loop arms them again once it is done with its turn: waited for, not timed, since a
        // slow machine or a sanitizer can take longer than any fixed pause.)
        // Under a loaded parallel run the loop may take a queued operation between that check and
        // the send (and disarm), so a few small exchanges are allowed; one of them must go direct.
        let deadline = ContinuousClock.now + .seconds(10)
        for _ in 0..<5 where flow.mailbox.directlyWrittenBytes == 100 {
            while !flow.mailbox.directWritesArmed && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            try await Self.exchange(flow, size: 10)
        }
        #expect(flow.mailbox.directlyWrittenBytes == 110, "direct writes resume once the loop wrote everything")
        flow.cancel(force: false)
        try await states.wait("cancelled", timeout: 10) { $0.contains(.cancelled) }
    }

    @Test("without a socket of its own, bulk sends reuse the buffers of written sends, every byte arrives as sent, and a quiet flow lets them go")
    func bulkSendsReuseBuffers() async throws {
        let sink = Sink()
        let (server, flow, states) = try await Self.readyFlow { sink }
        defer { server.close(promise: nil) }
        // (As a flow whose loop cannot write to the socket itself, TLS or a proxy: its large
        // sends are copied, into reused buffers. With the socket they are not copied at all:
        // UncopiedSendsTests.)
        try await flow.eventLoop.submit { flow.detachDirectSocket() }.get()
        let chunk = 64 * 1024, sends = 40
        let queue = DispatchQueue(label: "sender")
        // Each send is issued from the previous one's completion, as a bulk sender does, each
        // with its own fill byte, so a buffer reused too early would show in the bytes.
        @Sendable func send(_ index: Int) {
            guard index < sends else { return }
            flow.send(data: Data(repeating: UInt8(index), count: chunk), isComplete: true, closesWrite: false) {
                error, ticket in
                queue.async { ticket.run { #expect(error == nil); send(index + 1) } }
            }
        }
        queue.async { send(0) }
        let chunks = try await sink.received.wait("all the bytes", timeout: 20) {
            $0.reduce(0) { $0 + $1.count } >= chunk * sends
        }
        let bytes = chunks.flatMap { $0 }
        #expect(bytes.count == chunk * sends)
        for index in 0..<sends {
            let slice = bytes[(index * chunk)..<((index + 1) * chunk)]
            #expect(slice.allSatisfy { $0 == UInt8(index) }, "send \(index) arrived altered")
        }
        #if DEBUG
        #expect(flow.mailbox.spareBufferReuses > 0, "later sends should reuse the buffers of written ones")
        #endif
        // Two checks without a send in between let them go (a busy machine may delay them).
        var waited = Duration.zero
        while flow.mailbox.spareBufferCount > 0 && waited < .seconds(15) {
            try await Task.sleep(for: .milliseconds(100))
            waited += .milliseconds(100)
        }
        #expect(flow.mailbox.spareBufferCount == 0, "a quiet flow should keep no send buffers")
        flow.cancel(force: false)
        try await states.wait("cancelled", timeout: 10) { $0.contains(.cancelled) }
    }

    /// Resets every connection it accepts once its first bytes arrive (not at once: the flow
    /// must reach `ready` before the reset, or it waits instead of failing).
    final class Reset: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let channel = context.channel
            _ = (channel as? SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).always { _ in
                channel.close(promise: nil)
            }
        }
    }

    @Test("small sends to a peer that reset the connection fail it with the socket's error, never leave it ready")
    func sendsAfterAResetFailTheFlow() async throws {
        let (server, flow, states) = try await Self.readyFlow { Reset() }
        defer { server.close(promise: nil) }
        for _ in 0..<20 {
            flow.send(data: Data("x".utf8), isComplete: true, closesWrite: false, completion: nil)
            try await Task.sleep(for: .milliseconds(5))
        }
        let seen = try await states.wait("failed", timeout: 5) { states in
            states.contains { if case .failed = $0 { return true } else { return false } }
        }
        let failure = seen.first { if case .failed = $0 { return true } else { return false } }
        #expect(failure == .failed(.posix(ECONNRESET)) || failure == .failed(.posix(EPIPE)), "\(seen)")
        flow.cancel(force: false)
    }
}

/// Keeps every byte it receives.
final class Sink: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let received = Recorder<[UInt8]>()
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if let bytes = buffer.readBytes(length: buffer.readableBytes) { received.append(bytes) }
    }
}
