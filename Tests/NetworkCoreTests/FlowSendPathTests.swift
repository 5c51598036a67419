#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkCore
import Testing

/// What each send becomes, on the value type that decides it (no socket involved).
@Suite("Core.FlowSendPath")
struct FlowSendPathTests {
    private func send(_ text: String?, complete: Bool = true, final: Bool = false, waits: Bool = false) -> FlowSend {
        let completion: Flow.SendCompletion? = waits ? { @Sendable _, _ in } : nil
        return FlowSend(
            data: text.map { ByteBuffer(string: $0) }, isComplete: complete, closesWrite: final, completion: completion)
    }

    @Test func streamSendsPassThroughAndAFinalOneClosesTheSendingSide() {
        var path = FlowSendPath()
        #expect(path.step(send("a"), datagrams: false) == .stream(ByteBuffer(string: "a"), closesOutput: false))
        #expect(path.step(send(""), datagrams: false) == .stream(nil, closesOutput: false))
        // Final but incomplete: the side stays open.
        #expect(path.step(send("b", complete: false, final: true), datagrams: false) == .stream(ByteBuffer(string: "b"), closesOutput: false))
        #expect(path.step(send("c", final: true), datagrams: false) == .stream(ByteBuffer(string: "c"), closesOutput: true))
        #expect(path.writeClosed)
        #expect(path.step(send("d"), datagrams: false) == .rejected(.posix(EPIPE)))
    }

    @Test func incompleteSendsAssembleOneDatagram() {
        var path = FlowSendPath()
        #expect(path.step(send("ab", complete: false), datagrams: true) == .absorbed)
        #expect(path.step(send(nil, complete: false), datagrams: true) == .absorbed)
        #expect(path.datagram(send("cd")) == ByteBuffer(string: "abcd"))
        // A bare completion with nothing pending sends nothing; an empty complete send after an
        // incomplete one closes that datagram.
        #expect(path.step(send(nil), datagrams: true) == .absorbed)
        #expect(path.step(send("x", complete: false), datagrams: true) == .absorbed)
        #expect(path.datagram(send(nil)) == ByteBuffer(string: "x"))
        #expect(path.datagram(send("")) == ByteBuffer())
    }

    @Test func heldSendsLeaveInOrderAndFastOpenTakesTheIdempotentHead() {
        var path = FlowSendPath()
        #expect(path.fastOpenData() == nil)
        path.hold(send("GET "))
        path.hold(send("/"))
        path.hold(send("!", waits: true))
        path.hold(send("x"))
        let head = path.fastOpenData()
        #expect(head?.data == ByteBuffer(string: "GET /"))
        #expect(head?.sends == 2)
        let sent = path.takeFirst(2)
        #expect(sent.map { $0.data } == [ByteBuffer(string: "GET "), ByteBuffer(string: "/")])
        #expect(path.fastOpenData() == nil, "a send someone waits for is not idempotent")
        #expect(path.takeQueued().map { $0.data } == [ByteBuffer(string: "!"), ByteBuffer(string: "x")])
        #expect(path.queued.isEmpty)
    }

    @Test func aFinalSendEndsTheFastOpenPrefix() {
        var path = FlowSendPath()
        path.hold(send("a"))
        path.hold(send("b", final: true))
        #expect(path.fastOpenData()?.sends == 1)
    }
}

extension FlowSendPath {
    /// `step(_:datagrams:)` for a send made on the spot.
    fileprivate mutating func step(_ send: FlowSend, datagrams: Bool) -> Step {
        var send = send
        return step(&send, datagrams: datagrams)
    }

    /// The datagram `send` completes (left as its bytes), nil when it is not `.datagram`.
    fileprivate mutating func datagram(_ send: FlowSend) -> ByteBuffer? {
        var send = send
        guard step(&send, datagrams: true) == .datagram else { return nil }
        return send.data
    }
}
