#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// Send completions, write-close and the two ways of cancelling, seen from a raw TCP peer.
    @Suite("Behaviour.Send")
    struct Send {
        @Test("200 send completions fire in the order the sends were issued, and the peer gets every byte in order")
        func sendCompletionsInOrder() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            let count = 200
            let chunk = 1024
            let drained = Task.detached { try peer.receiveExactly(count * chunk, timeout: 20) }
            let order = Recorder<Int>()
            let errors = Recorder<NWError>()
            var expected: [UInt8] = []
            for index in 0..<count {
                let bytes = pattern(chunk, seed: index)
                expected += bytes
                probe.connection.send(content: Data(bytes), completion: .contentProcessed { error in
                    if let error { errors.append(error) }
                    order.append(index)
                })
            }
            let seen = try await order.wait(count: count, "200 send completions", timeout: 20)
            #expect(seen == Array(0..<count))
            #expect(errors.values.isEmpty, "send errors: \(errors.values)")
            let bytes = try await drained.value
            #expect(bytes == expected)
            try await probe.cancelAndWait()
        }

        @Test("a final message gives the peer end of stream while our side can still receive")
        func finalMessageClosesWriteSide() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            #expect(try await probe.send(Array("abc".utf8)) == nil)
            #expect(try await probe.send(nil, context: .finalMessage, isComplete: true) == nil)

            let (bytes, end) = try await offload { peer.receiveUntilEnd(timeout: 10) }
            #expect(bytes == Array("abc".utf8))
            #expect(end == .endOfStream, "the peer's recv should return 0 after our final message, got \(end)")

            try peer.sendAll(Array("xyz".utf8))
            let reply = try await probe.receive(minimum: 3, maximum: 3)
            #expect(reply.text == "xyz")
            #expect(reply.error == nil)
            #expect(reply.isComplete == false)
            peer.shutdownWrite()
            let end2 = try await probe.receive(minimum: 1, maximum: 10)
            #expect(end2.isComplete == true)
            #expect(end2.error == nil)
            #expect(probe.states.values == [.preparing, .ready], "closing both directions in order is not a failure")
            try await probe.cancelAndWait()
        }

        @Test("defaultStream with isComplete also closes the write side")
        func defaultStreamClosesWriteSide() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            #expect(try await probe.send(Array("last".utf8), context: .defaultStream, isComplete: true) == nil)
            let (bytes, end) = try await offload { peer.receiveUntilEnd(timeout: 10) }
            #expect(bytes == Array("last".utf8))
            #expect(end == .endOfStream)
            try await probe.cancelAndWait()
        }

        @Test("a defaultMessage with isComplete does not close the write side")
        func defaultMessageKeepsWriteSideOpen() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            #expect(try await probe.send(Array("one".utf8), context: .defaultMessage, isComplete: true) == nil)
            #expect(try await probe.send(Array("two".utf8), context: .defaultMessage, isComplete: true) == nil)
            #expect(try await offload { try peer.receiveExactly(6) } == Array("onetwo".utf8))
            let more = try await offload { peer.receive(timeout: 0.3) }
            #expect(more == .timedOut, "the peer should see neither data nor end of stream, got \(more)")
            try await probe.cancelAndWait()
        }

        @Test("cancel gives the peer end of stream (FIN)")
        func cancelGivesEndOfStream() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            #expect(try await probe.send(Array("bye".utf8)) == nil)
            try await probe.cancelAndWait()
            let (bytes, end) = try await offload { peer.receiveUntilEnd(timeout: 10) }
            #expect(bytes == Array("bye".utf8), "data sent before cancel must still reach the peer")
            #expect(end == .endOfStream, "cancel should close gracefully, the peer saw \(end)")
            #expect(probe.states.values == [.preparing, .ready, .cancelled])
        }

        @Test("forceCancel gives the peer a reset (ECONNRESET)")
        func forceCancelGivesReset() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            probe.connection.forceCancel()
            try await probe.wait(for: .cancelled)
            let (_, end) = try await offload { peer.receiveUntilEnd(timeout: 10) }
            #expect(end == .error(ECONNRESET), "forceCancel should reset the connection, the peer saw \(end)")
            #expect(probe.states.values == [.preparing, .ready, .cancelled])
        }
    }
}
