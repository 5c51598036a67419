#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOEmbedded
import Testing

@testable import NetworkCore

/// `QUICDatagramBridge`, the bookkeeping of a QUIC connection carrying datagrams for its flow.
@Suite("QUIC.DatagramBridge")
struct QUICDatagramBridgeTests {
    @Test("datagrams wait until the flow asks, then all go at once, in order; nothing is handed out twice")
    func deliversOnRequest() {
        var bridge = QUICDatagramBridge()
        let first = bridge.received(ByteBuffer(string: "a"))
        let second = bridge.received(ByteBuffer(string: "b"))
        #expect(first && second)
        var delivered = bridge.deliver()
        #expect(delivered.isEmpty, "no read asked for yet")
        bridge.readRequestedByFlow()
        delivered = bridge.deliver()
        #expect(delivered.map { String(buffer: $0) } == ["a", "b"])
        delivered = bridge.deliver()
        #expect(delivered.isEmpty)
        let third = bridge.received(ByteBuffer(string: "c"))
        delivered = bridge.deliver()
        #expect(third && delivered.isEmpty, "one request answers one delivery")
        bridge.readRequestedByFlow()
        delivered = bridge.deliver()
        #expect(delivered.map { String(buffer: $0) } == ["c"])
    }

    @Test("a flow that does not read holds at most inboundLimit datagrams; the rest are dropped and counted")
    func boundedInbound() {
        var bridge = QUICDatagramBridge()
        for index in 0..<(QUICDatagramBridge.inboundLimit + 10) {
            let kept = bridge.received(ByteBuffer(string: "\(index)"))
            #expect(kept == (index < QUICDatagramBridge.inboundLimit))
        }
        #expect(bridge.dropped == 10)
        bridge.readRequestedByFlow()
        let delivered = bridge.deliver()
        #expect(delivered.count == QUICDatagramBridge.inboundLimit)
        #expect(delivered.first.map { String(buffer: $0) } == "0", "the oldest are kept")
    }

    @Test("a refused datagram fails at once when nothing waits before it, else in its turn after those before it")
    func refusedInTurn() {
        let loop = EmbeddedEventLoop()
        var bridge = QUICDatagramBridge()
        let promises = (0..<4).map { _ in loop.makePromise(of: Void.self) }
        let alone = bridge.refused(.posix(EMSGSIZE), promise: promises[0])
        #expect(alone)
        bridge.queued(promise: promises[1])
        let behind = bridge.refused(.posix(EMSGSIZE), promise: promises[2])
        bridge.queued(promise: promises[3])
        #expect(!behind)
        let first = bridge.settled([])
        #expect(first.isEmpty, "the refused one waits for the one before it")
        let rest = bridge.settled([nil, nil])
        #expect(rest.map { $0.promise?.futureResult } == [promises[1], promises[2], promises[3]].map(\.futureResult))
        #expect(rest.map(\.error) == [nil, .posix(EMSGSIZE), nil])
        for promise in promises { promise.succeed() }
    }

    @Test("results settle the queued datagrams' promises in queue order; what remains fails when abandoned")
    func settlesInOrder() throws {
        let loop = EmbeddedEventLoop()
        var bridge = QUICDatagramBridge()
        let promises = (0..<3).map { _ in loop.makePromise(of: Void.self) }
        for promise in promises { bridge.queued(promise: promise) }
        let settled = bridge.settled([nil, .posix(EMSGSIZE)])
        let abandoned = bridge.abandonWrites()
        let afterwards = bridge.settled([nil])
        #expect(settled.count == 2)
        #expect(settled[0].promise?.futureResult === promises[0].futureResult && settled[0].error == nil)
        #expect(settled[1].promise?.futureResult === promises[1].futureResult && settled[1].error == .posix(EMSGSIZE))
        #expect(abandoned.count == 1 && abandoned[0]?.futureResult === promises[2].futureResult)
        #expect(afterwards.isEmpty)
        for promise in promises { promise.succeed() }
    }
}
