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
        @Test("sends issued right after start complete only after the ready state was delivered (client and accepted)")
        func sendCompletionsAfterReady() async throws {
            let queue = DispatchQueue(label: "send-after-ready")
            let acceptedEvents = Recorder<String>()
            let listener = ListenerProbe(try NWListener(using: .tcp)) { connection in
                // As servers write it: start, then send at once, before any state arrived.
                connection.stateUpdateHandler = { acceptedEvents.append("state \($0)") }
                connection.start(queue: queue)
                for index in 0..<3 {
                    connection.send(content: Data("accepted \(index)\n".utf8), completion: .contentProcessed { error in
                        acceptedEvents.append("send \(index) \(error.map { "\($0)" } ?? "ok")")
                    })
                }
            }
            let port = try await listener.startAndWaitReady()

            let clientEvents = Recorder<String>()
            let client = NWConnection(host: "127.0.0.1", port: try #require(NWEndpoint.Port(rawValue: port)), using: .tcp)
            client.stateUpdateHandler = { clientEvents.append("state \($0)") }
            client.start(queue: queue)
            for index in 0..<3 {
                client.send(content: Data("client \(index)\n".utf8), completion: .contentProcessed { error in
                    clientEvents.append("send \(index) \(error.map { "\($0)" } ?? "ok")")
                })
            }
            for (name, events) in [("client", clientEvents), ("accepted", acceptedEvents)] {
                let seen = try await events.wait("\(name): three send completions", timeout: 10) { events in
                    events.filter { $0.hasPrefix("send") }.count == 3
                }
                #expect(seen == ["state preparing", "state ready", "send 0 ok", "send 1 ok", "send 2 ok"], "\(name): \(seen)")
            }
            client.cancel()
            for connection in listener.connections.values { connection.cancel() }
            try await listener.cancelAndWait()
        }

        @Test("200 send completions fire in the order the sends were issued, and the peer gets every byte in order")
        func sendCompletionsInOrder() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            let count = 200
            let chunk = 1024
            let drained = ThreadTask { try peer.receiveExactly(count * chunk, timeout: 20) }
            let sent = SentChunks(on: probe.connection, count: count, size: chunk)
            let seen = try await sent.order.wait(count: count, "200 send completions", timeout: 20)
            #expect(seen == Array(0..<count))
            #expect(sent.errors.values.isEmpty, "send errors: \(sent.errors.values)")
            let bytes = try await drained.value
            #expect(sent.matches(bytes))
            try await probe.cancelAndWait()
        }

        /// A connected pair whose peer has a small receive buffer and reads nothing until told.
        private static func slowPeerPair() async throws -> (Probe, RawSocket, RawSocket) {
            let server = try RawSocket()
            // Set before listen so the accepted socket inherits it (and its window scale).
            try server.setOption(SOL_SOCKET, SO_RCVBUF, 64 * 1024)
            try server.bind()
            try server.listen()
            let probe = Probe(port: server.localPort)
            try await probe.startAndWaitReady()
            let peer = try await offload { try server.accept() }
            return (probe, peer, server)
        }

        /// The most a Linux TCP socket buffers for sending (`tcp_wmem`'s maximum).
        private static func kernelSendBufferMaximum() -> Int {
            let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/tcp_wmem", encoding: .utf8)) ?? ""
            return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).last.flatMap { Int($0) } ?? 4 << 20
        }

        @Test("completions come as the stack takes the bytes, in order, and stop at a bounded amount while the peer reads nothing")
        func completionsStopAtABoundedBuffer() async throws {
            let (probe, peer, _) = try await Self.slowPeerPair()
            let chunk = 64 * 1024
            let count = 160
            let sent = SentChunks(on: probe.connection, count: count, size: chunk)
            let (order, errors) = (sent.order, sent.errors)
            // Everything that can leave has left after a second; then nothing more completes.
            try await Task.sleep(for: .seconds(1))
            let stalled = order.values.count
            try await Task.sleep(for: .milliseconds(400))
            #expect(order.values.count == stalled, "completions went on while the peer read nothing")
            // The kernel's send buffer, the peer's receive buffer (doubled by the kernel), the
            // flow's own 512 KiB and the one send that crossed it.
            let bound = Self.kernelSendBufferMaximum() + 2 * 64 * 1024 + 512 * 1024 + chunk
            #expect(stalled > 0, "sends into an empty connection complete before the peer reads")
            #expect(stalled * chunk <= bound, "\(stalled) sends of 64 KiB completed with nothing read (bound \(bound) B)")
            #expect(order.values == Array(0..<stalled))

            let received = ThreadTask { try peer.receiveExactly(count * chunk, timeout: 30) }
            let seen = try await order.wait(count: count, "every send completion", timeout: 30)
            #expect(seen == Array(0..<count))
            #expect(errors.values.isEmpty, "send errors: \(errors.values)")
            let bytes = try await received.value
            #expect(sent.matches(bytes))
            try await probe.cancelAndWait()
        }

        @Test("a graceful cancel right after sending still delivers every byte handed over, then end of stream")
        func cancelAfterSendsDeliversEverything() async throws {
            let (probe, peer, _) = try await Self.slowPeerPair()
            let chunk = 64 * 1024
            // More than the kernel's buffers hold, so some bytes still wait in the flow at cancel.
            let count = Self.kernelSendBufferMaximum() / chunk + 32
            let sent = SentChunks(on: probe.connection, count: count, size: chunk)
            let (order, errors) = (sent.order, sent.errors)
            probe.connection.cancel()
            try await probe.wait(for: .cancelled)
            // The peer starts reading only now: the bytes wait in the flow and the socket.
            try await Task.sleep(for: .milliseconds(300))
            let (bytes, end) = try await offload { peer.receiveUntilEnd(timeout: 10) }
            #expect(bytes.count == sent.expected.count)
            #expect(sent.matches(bytes), "data sent before cancel must reach the peer whole and in order")
            #expect(end == .endOfStream)
            let seen = try await order.wait(count: count, "every send completion", timeout: 10)
            #expect(seen == Array(0..<count))
            #expect(errors.values.isEmpty, "sends taken before the cancel went out: \(errors.values)")
            #expect(probe.states.values == [.preparing, .ready, .cancelled])
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
            // Both directions are now closed: the connection leaves `ready` on its own (as Apple's
            // does; SwiftNIO's Network.framework channel relies on it to tear down), with ENOTCONN.
            try await probe.wait(for: .failed(.posix(.ENOTCONN)), timeout: 5)
            #expect(probe.states.values == [.preparing, .ready, .failed(.posix(.ENOTCONN))])
            try await probe.cancelAndWait()
        }

        @Test("the peer's end of stream first, then our final message: the connection ends with ENOTCONN")
        func peerClosesFirstThenFinalMessage() async throws {
            let (probe, peer, _) = try await StreamReceive.connectedPair()
            try peer.sendAll(Array("bye".utf8))
            peer.shutdownWrite()
            let last = try await probe.receive(minimum: 1, maximum: 10)
            #expect(last.text == "bye")
            let end = last.isComplete ? last : try await probe.receive(minimum: 1, maximum: 10)
            #expect(end.isComplete == true)
            // Half-closed by the peer only: still ready, and sending still works.
            #expect(probe.states.values == [.preparing, .ready])
            #expect(try await probe.send(Array("ok".utf8)) == nil)
            #expect(try await probe.send(nil, context: .finalMessage, isComplete: true) == nil)
            let (bytes, peerEnd) = try await offload { peer.receiveUntilEnd(timeout: 10) }
            #expect(bytes == Array("ok".utf8))
            #expect(peerEnd == .endOfStream)
            try await probe.wait(for: .failed(.posix(.ENOTCONN)), timeout: 5)
            #expect(probe.states.values == [.preparing, .ready, .failed(.posix(.ENOTCONN))])
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
