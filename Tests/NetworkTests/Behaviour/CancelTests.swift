#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// `cancel()` in every state: pending receives complete with an error before `cancelled`,
    /// `cancelled` is delivered once and last, nothing follows it.
    @Suite("Behaviour.Cancel")
    struct Cancel {
        @Test("cancel in setup (before start): after start only the pending receive's error and cancelled are delivered")
        func cancelInSetup() async throws {
            let server = try RawSocket.tcpServer()
            let log = EventLog(port: server.localPort)
            log.receive(0)
            log.connection.cancel()
            await pause(milliseconds: 200)
            #expect(log.events.values.isEmpty, "delivered before start: \(log.events.values)")
            log.start()
            try await log.expectCancelledLast(timeout: 5)
            #expect(log.events.values == [.receive(0, .posix(.ECANCELED)), .state(.cancelled)])
            // It never connected.
            let connected = try await offload { server.waitReadable(timeout: 0.3) }
            #expect(connected == false, "a connection cancelled before start must not connect")
        }

        @Test("cancel of an inbound connection in setup closes it gracefully without starting it")
        func cancelInboundInSetup() async throws {
            let listener = try ListenerProbe()
            let port = try await listener.startAndWaitReady()
            let client = try RawSocket()
            try await offload { try client.connect(port: port) }
            let connection = try await listener.connections.wait(count: 1, "inbound connection")[0]
            #expect(connection.state == .setup)
            let log = EventLog(connection)
            connection.cancel()
            let (_, end) = try await offload { client.receiveUntilEnd(timeout: 10) }
            #expect(end == .endOfStream, "the peer of a cancelled inbound connection should see end of stream, got \(end)")
            log.start()
            try await log.expectCancelledLast(timeout: 5)
            #expect(log.states == [.cancelled])
            try await listener.cancelAndWait()
        }

        @Test("cancel while preparing (SYN unanswered: the listener's accept queue is full)")
        func cancelInPreparing() async throws {
            // backlog 0: one completed connection fills the accept queue; later SYNs are dropped.
            let server = try RawSocket.tcpServer(backlog: 0)
            let filler = try RawSocket()
            try await offload { try filler.connect(port: server.localPort) }
            let filler2 = try RawSocket()
            try filler2.connectNonBlocking(port: server.localPort)
            await pause(milliseconds: 50)

            let log = EventLog(port: server.localPort)
            log.receive(0)
            log.start()
            try await log.wait(for: .preparing)
            await pause(milliseconds: 400)
            try #require(log.states == [.preparing], "the connection should still be preparing: \(log.states)")
            #expect(log.connection.state == .preparing)
            log.connection.cancel()
            try await log.expectCancelledLast()
            #expect(log.events.values == [.state(.preparing), .receive(0, .posix(.ECANCELED)), .state(.cancelled)])
        }

        @Test("cancel while waiting")
        func cancelInWaiting() async throws {
            let log = EventLog(port: try freePort())
            log.receive(0)
            log.start()
            try await log.waitForState("waiting") { $0.isWaiting || $0.isTerminal }
            log.connection.cancel()
            try await log.expectCancelledLast()
            #expect(foldingWaitingRetries(log.events.values) == [
                .state(.preparing), .state(.waiting(.posix(.ECONNREFUSED))), .receive(0, .posix(.ECANCELED)), .state(.cancelled),
            ])
        }

        @Test("cancel while ready: pending receives complete with ECANCELED, in order, before cancelled")
        func cancelInReady() async throws {
            let (log, _, peer) = try await EventLog.readyAgainstRawServer()
            for index in 0..<3 { log.receive(index) }
            await pause(milliseconds: 50)
            log.connection.cancel()
            try await log.expectCancelledLast()
            #expect(log.events.values == [
                .state(.preparing), .state(.ready),
                .receive(0, .posix(.ECANCELED)), .receive(1, .posix(.ECANCELED)), .receive(2, .posix(.ECANCELED)),
                .state(.cancelled),
            ])
            // A second cancel, and a forceCancel, change nothing.
            log.connection.cancel()
            log.connection.forceCancel()
            await pause(milliseconds: 200)
            #expect(log.events.values.last == .state(.cancelled))
            #expect(log.events.values.filter(\.isCancelled).count == 1)
            _ = peer
        }

        @Test(
            "cancel with sends waiting for a peer that never reads: every send still completes, none lost; forceCancel at once, cancel once its linger ends",
            arguments: [(force: true, framed: false), (force: true, framed: true), (force: false, framed: false)])
        func cancelWithSendsWaiting(force: Bool, framed: Bool) async throws {
            // (Framed: each send is a message of a framer over TCP.)
            let parameters = framed ? GameFramer.parameters() : .tcp
            let (log, _, peer) = try await EventLog.readyAgainstRawServer(parameters: parameters)
            // 16 MiB at once: far more than the socket buffers and the send budget take.
            let count = 64
            let chunk = [UInt8](repeating: 7, count: 256 * 1024)
            for index in 0..<count { log.send(index, chunk) }
            let completed = await settledCount { log.events.values.filter(\.isSend).count }
            try #require(completed < count, "every send completed although the peer reads nothing")
            let cancelled = ContinuousClock.now
            if force { log.connection.forceCancel() } else { log.connection.cancel() }
            try await log.wait(for: .cancelled)
            // A graceful cancel lets what was handed over drain, for up to `closeLinger` (10 s);
            // then, as at once after forceCancel, the rest completes with ECANCELED.
            let all = try await log.events.wait("every send completion", timeout: 20) {
                $0.filter(\.isSend).count == count
            }
            let elapsed = ContinuousClock.now - cancelled
            #expect(elapsed < (force ? .seconds(5) : .seconds(15)), "took \(elapsed)")
            if !force { #expect(elapsed > .seconds(9), "a graceful cancel gave up after \(elapsed)") }
            let sends = all.compactMap { event -> (Int, NWError?)? in
                if case .send(let index, let error) = event { return (index, error) } else { return nil }
            }
            #expect(sends.map(\.0) == Array(0..<count), "completions out of order: \(all)")
            #expect(sends.last?.1 == .posix(.ECANCELED))
            #expect(all.filter(\.isCancelled).count == 1)
            _ = peer
        }

        @Test("cancel while failed")
        func cancelInFailed() async throws {
            let (log, _, peer) = try await EventLog.readyAgainstRawServer()
            peer.resetAndClose()
            try await log.waitForState("failed") { $0.isTerminal }
            log.connection.cancel()
            try await log.expectCancelledLast()
            #expect(log.states == [.preparing, .ready, .failed(.posix(.ECONNRESET)), .cancelled])
        }

        @Test("forceCancel while preparing also ends with cancelled, last")
        func forceCancelInPreparing() async throws {
            let server = try RawSocket.tcpServer(backlog: 0)
            let filler = try RawSocket()
            try await offload { try filler.connect(port: server.localPort) }
            let log = EventLog(port: server.localPort)
            log.start()
            try await log.wait(for: .preparing)
            log.connection.forceCancel()
            try await log.expectCancelledLast()
            #expect(log.states == [.preparing, .cancelled])
        }
    }
}
