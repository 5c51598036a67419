#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NIOCore
import NIOPosix
import NetworkSync
import PeerSupport
import Testing

@testable import NetworkCore

/// Large stream sends of a plain-TCP flow go to the socket from their callers' `Data`, gathered
/// by the loop (`Flow+UncopiedSends`): every byte arrives, in order, also when the socket takes
/// only part of them and the rest goes through the channel, and when small sends (written from
/// the sender's thread or through the loop) come in between.
@Suite("Core.UncopiedSends")
struct UncopiedSendsTests {
    /// Checks every byte it receives against `expected` (which byte runs from an offset, and up
    /// to which offset; nothing is kept, so that a run of several suites stays small), but reads
    /// nothing for its first `pause`: the socket's buffers fill, so the sender's writes end up
    /// taken in part.
    final class LateSink: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias Pattern = @Sendable (Int) -> (byte: UInt8, end: Int)
        /// Per read: the bytes it brought, and whether all of them were the expected ones.
        let received = Recorder<(count: Int, wrongAt: Int?)>()
        let expected: Pattern
        let pause: TimeAmount
        private let offset = Lock(0)

        init(pause: TimeAmount, expected: @escaping Pattern) {
            self.pause = pause
            self.expected = expected
        }

        func channelActive(context: ChannelHandlerContext) {
            let channel = context.channel
            if pause > .zero {
                channel.setOption(ChannelOptions.autoRead, value: false).whenSuccess {
                    channel.eventLoop.scheduleTask(in: self.pause) {
                        channel.setOption(ChannelOptions.autoRead, value: true).whenSuccess { channel.read() }
                    }
                }
            }
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            let start = offset.withLock { offset in
                defer { offset += buffer.readableBytes }
                return offset
            }
            // Run by run, each compared at once (byte by byte is far too slow in a debug build).
            let wrong = buffer.withUnsafeReadableBytes { bytes -> Int? in
                guard let base = bytes.baseAddress else { return nil }
                var index = 0
                while index < bytes.count {
                    let run = expected(start + index)
                    let length = min(bytes.count, run.end - start) - index
                    let same = [UInt8](repeating: run.byte, count: length).withUnsafeBytes { expected in
                        expected.baseAddress.map { memcmp($0, base + index, length) == 0 } ?? false
                    }
                    if !same { return start + index }
                    index += length
                }
                return nil
            }
            received.append((buffer.readableBytes, wrong))
        }
    }

    /// The bytes `bulkSend` sends: each chunk filled with its index, and after every
    /// `smallEvery`-th chunk 10 bytes of 0xEE.
    static func pattern(chunk: Int, smallEvery: Int) -> LateSink.Pattern {
        { offset in
            let group = smallEvery * chunk + 10
            let groupStart = offset - offset % group
            let within = offset % group
            if within >= smallEvery * chunk { return (0xEE, groupStart + group) }
            let index = (offset / group) * smallEvery + within / chunk
            return (UInt8(index & 0x7f), groupStart + (within / chunk + 1) * chunk)
        }
    }

    /// Sends `sends` chunks of `chunk` bytes (`sends` a multiple of `smallEvery`), each from the
    /// previous one's completion as a bulk sender does, as `pattern` says.
    static func bulkSend(_ flow: Flow, sends: Int, chunk: Int, smallEvery: Int) {
        let queue = DispatchQueue(label: "sender")
        @Sendable func send(_ index: Int) {
            guard index < sends else { return }
            flow.send(data: Data(repeating: UInt8(index & 0x7f), count: chunk), isComplete: true, closesWrite: false) {
                error, ticket in
                queue.async { ticket.run { #expect(error == nil); send(index + 1) } }
            }
            if index % smallEvery == smallEvery - 1 {
                flow.send(data: Data(repeating: 0xEE, count: 10), isComplete: true, closesWrite: false, completion: nil)
            }
        }
        queue.async { send(0) }
    }

    static func check(_ sink: LateSink, total: Int) async throws {
        let reads = try await sink.received.wait("all the bytes", timeout: 30) {
            $0.reduce(0) { $0 + $1.count } >= total
        }
        #expect(reads.reduce(0) { $0 + $1.count } == total)
        if let wrong = reads.lazy.compactMap(\.wrongAt).first {
            Issue.record("the bytes from \(wrong) of \(total) on arrived altered or out of order")
        }
    }

    /// Cancels `flow` and waits for it to say so.
    static func cancel(_ flow: Flow, _ states: Recorder<FlowConnectionState>) async throws {
        flow.cancel(force: false)
        try await states.wait("cancelled", timeout: 10) { $0.contains(.cancelled) }
    }

    /// The bytes `flow` wrote from its senders' `Data` (debug builds count them).
    static func uncopiedBytes(_ flow: Flow) async throws -> UInt64 {
        #if DEBUG
        try await flow.eventLoop.submit { flow.uncopiedBytesWritten }.get()
        #else
        0
        #endif
    }

    @Test("64 KiB sends to a peer that keeps up leave from their callers' buffers, every byte as sent")
    func bulkSendsLeaveUncopied() async throws {
        let chunk = 64 * 1024
        let sink = LateSink(pause: .zero, expected: Self.pattern(chunk: chunk, smallEvery: 5))
        let (server, flow, states) = try await DirectIOTests.readyFlow { sink }
        defer { server.close(promise: nil) }
        Self.bulkSend(flow, sends: 40, chunk: chunk, smallEvery: 5)
        try await Self.check(sink, total: 40 * chunk + 8 * 10)
        #if DEBUG
        let uncopied = try await Self.uncopiedBytes(flow)
        #expect(uncopied > 0, "large sends should have been written from the callers' Data")
        #endif
        try await Self.cancel(flow, states)
    }

    @Test("a peer that reads late: sends the socket takes in part keep their order with those after them")
    func partialWritesKeepTheOrder() async throws {
        let chunk = 64 * 1024
        let sink = LateSink(pause: .milliseconds(300), expected: Self.pattern(chunk: chunk, smallEvery: 8))
        let (server, flow, states) = try await DirectIOTests.readyFlow { sink }
        defer { server.close(promise: nil) }
        // 16 MiB: more than loopback's socket buffers hold on both sides together (4 + 6 MiB
        // at most by default).
        let total = 256 * chunk + 32 * 10
        Self.bulkSend(flow, sends: 256, chunk: chunk, smallEvery: 8)
        try await Self.check(sink, total: total)
        let report = try await flow.eventLoop.submit { flow.report.sentBytes }.get()
        #expect(report == UInt64(total) - flow.mailbox.directlyWrittenBytes, "every byte counted once")
        try await Self.cancel(flow, states)
    }

    @Test("sends that reach a full socket wait for it in their callers' buffers: only a partial write's rest is copied")
    func sendsWaitForAFullSocketUncopied() async throws {
        let chunk = 64 * 1024, sends = 256
        let sink = LateSink(pause: .milliseconds(300)) { (UInt8($0 / chunk % 8), ($0 / chunk + 1) * chunk) }
        let (server, flow, states) = try await DirectIOTests.readyFlow { sink }
        defer { server.close(promise: nil) }
        // 16 MiB issued at once (eight buffers, each sent 32 times: the test stays small), while
        // the peer reads nothing: most of it meets a socket that is full.
        let buffers = (0..<8).map { Data(repeating: UInt8($0), count: chunk) }
        for index in 0..<sends {
            flow.send(data: buffers[index % 8], isComplete: true, closesWrite: false, completion: nil)
        }
        try await Self.check(sink, total: sends * chunk)
        let report = try await flow.eventLoop.submit { flow.report.sentBytes }.get()
        #expect(report == UInt64(sends * chunk) - flow.mailbox.directlyWrittenBytes, "every byte counted once")
        #if DEBUG
        // (About 99 % here; copying every send that found the channel holding bytes, and all a
        // turn's sends after a partial write, left about a third uncopied.)
        let uncopied = try await Self.uncopiedBytes(flow)
        #expect(uncopied > UInt64(sends * chunk / 4 * 3), "\(uncopied) of \(sends * chunk) bytes left uncopied")
        #endif
        try await Self.cancel(flow, states)
    }

    @Test("a send that ends the sending side while sends wait for a full socket goes after them")
    func aClosingSendFollowsSendsWaitingForTheSocket() async throws {
        let chunk = 1024 * 1024
        let sink = LateSink(pause: .milliseconds(200)) { (UInt8($0 / chunk + 1), ($0 / chunk + 1) * chunk) }
        let (server, flow, states) = try await DirectIOTests.readyFlow { sink }
        defer { server.close(promise: nil) }
        for index in 1...7 {
            flow.send(data: Data(repeating: UInt8(index), count: chunk), isComplete: true, closesWrite: false, completion: nil)
        }
        let closed = Recorder<FlowError?>()
        flow.send(data: Data(repeating: 8, count: chunk), isComplete: true, closesWrite: true) { error, _ in
            closed.append(error)
        }
        try await Self.check(sink, total: 8 * chunk)
        let errors = try await closed.wait("the closing send's completion", timeout: 10) { !$0.isEmpty }
        #expect(errors == [nil])
        try await Self.cancel(flow, states)
    }

    @Test("a large send that ends the sending side goes through the channel, after the held ones")
    func aFinalLargeSendFollowsTheHeldOnes() async throws {
        let chunk = 256 * 1024
        let sink = LateSink(pause: .zero) { (UInt8($0 / chunk + 1), ($0 / chunk + 1) * chunk) }
        let (server, flow, states) = try await DirectIOTests.readyFlow { sink }
        defer { server.close(promise: nil) }
        // Issued together, so that the loop takes them in one turn.
        flow.beginBatch()
        flow.send(data: Data(repeating: 1, count: chunk), isComplete: true, closesWrite: false, completion: nil)
        flow.send(data: Data(repeating: 2, count: chunk), isComplete: true, closesWrite: false, completion: nil)
        flow.send(data: Data(repeating: 3, count: chunk), isComplete: true, closesWrite: true, completion: nil)
        flow.endBatch()
        try await Self.check(sink, total: 3 * chunk)
        try await Self.cancel(flow, states)
    }
}
