#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import NIOPosix
import PeerSupport
import Testing

/// Records every callback of one connection (states, receive and send completions) in the order
/// they were delivered on the connection's queue.
final class EventLog: Sendable {
    /// A started connection to a raw TCP server, once ready, with the server and the accepted
    /// peer socket (keep `server` alive for as long as the test needs the listening socket).
    static func readyAgainstRawServer(
        parameters: NWParameters = .tcp
    ) async throws -> (log: EventLog, server: RawSocket, peer: RawSocket) {
        let server = try RawSocket.tcpServer()
        let log = EventLog(port: server.localPort, parameters: parameters)
        log.start()
        try await log.wait(for: .ready)
        let peer = try await offload { try server.accept() }
        return (log, server, peer)
    }

    let events = Recorder<Event>()
    let connection: NWConnection
    let queue = DispatchQueue(label: "behaviour.events")

    init(_ connection: NWConnection) {
        self.connection = connection
        let events = self.events
        connection.stateUpdateHandler = { events.append(.state($0)) }
    }

    convenience init(port: UInt16, parameters: NWParameters = .tcp) {
        self.init(NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: parameters))
    }

    func start() { connection.start(queue: queue) }

    func receive(_ index: Int, minimum: Int = 1, maximum: Int = 65_536) {
        let events = self.events
        connection.receive(minimumIncompleteLength: minimum, maximumLength: maximum) { _, _, _, error in
            events.append(.receive(index, error))
        }
    }

    func send(_ index: Int, _ bytes: [UInt8]) {
        let events = self.events
        connection.send(content: Data(bytes), completion: .contentProcessed { events.append(.send(index, $0)) })
    }

    var states: [NWConnection.State] {
        events.values.compactMap { if case .state(let state) = $0 { return state } else { return nil } }
    }

    func wait(for state: NWConnection.State, timeout: Double = 10) async throws {
        try await events.wait("state \(state)", timeout: timeout) { $0.contains(.state(state)) }
    }

    @discardableResult
    func waitForState(
        _ what: String, timeout: Double = 10, where predicate: @escaping @Sendable (NWConnection.State) -> Bool
    ) async throws -> NWConnection.State {
        let seen = try await events.wait(what, timeout: timeout) { events in
            events.contains { if case .state(let state) = $0 { return predicate(state) } else { return false } }
        }
        for case .state(let state) in seen where predicate(state) { return state }
        fatalError("unreachable")
    }

    /// Waits for `cancelled`, then checks it was delivered once, last, and that nothing followed
    /// it for a while.
    func expectCancelledLast(
        timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await wait(for: .cancelled, timeout: timeout)
        await pause(milliseconds: 300)
        let all = events.values
        #expect(all.last == .state(.cancelled), "events after cancelled: \(all)", sourceLocation: sourceLocation)
        #expect(all.filter(\.isCancelled).count == 1, "cancelled delivered more than once: \(all)", sourceLocation: sourceLocation)
        #expect(connection.state == .cancelled, sourceLocation: sourceLocation)
    }
}

extension BehaviourTests {
    /// The state table of `NWConnection`, row by row, over real sockets.
    @Suite("Behaviour.State")
    struct State {
        @Test("setup → preparing → ready, and the state getter follows")
        func setupPreparingReady() async throws {
            let server = try RawSocket.tcpServer()
            let log = EventLog(port: server.localPort)
            #expect(log.connection.state == .setup)
            log.start()
            try await log.wait(for: .ready)
            #expect(log.states == [.preparing, .ready])
            #expect(log.connection.state == .ready)
            log.connection.cancel()
            try await log.expectCancelledLast()
            #expect(log.states == [.preparing, .ready, .cancelled])
        }

        @Test("viabilityUpdateHandler hears true when the connection becomes ready, right after the ready state")
        func viabilityAtReady() async throws {
            let server = try RawSocket.tcpServer()
            let connection = NWConnection(
                host: "127.0.0.1", port: try #require(NWEndpoint.Port(rawValue: server.localPort)), using: .tcp)
            let events = Recorder<String>()
            connection.stateUpdateHandler = { events.append("state \($0)") }
            connection.viabilityUpdateHandler = { events.append("viable \($0)") }
            connection.start(queue: DispatchQueue(label: "viability-at-ready"))
            let seen = try await events.wait("viability true", timeout: 10) { $0.contains("viable true") }
            #expect(Array(seen.prefix(3)) == ["state preparing", "state ready", "viable true"], "events: \(seen)")
            connection.cancel()
            let all = try await events.wait("cancelled", timeout: 10) { $0.contains("state cancelled") }
            #expect(all.filter { $0.hasPrefix("viable") } == ["viable true"], "events: \(all)")
        }

        @Test("nothing is delivered before start; after start it is")
        func nothingBeforeStart() async throws {
            let server = try RawSocket.tcpServer()
            let log = EventLog(port: server.localPort)
            log.receive(0, minimum: 5, maximum: 1)  // invalid bounds: completes with EINVAL, but only after start
            log.send(1, Array("early".utf8))
            await pause(milliseconds: 200)
            #expect(log.events.values.isEmpty, "delivered before start: \(log.events.values)")
            #expect(log.connection.state == .setup)
            #expect(log.connection.queue == nil)

            log.start()
            try await log.wait(for: .ready)
            let peer = try await offload { try server.accept() }
            let all = try await log.events.wait("the receive and send completions") { events in
                events.contains { if case .receive(0, _) = $0 { return true } else { return false } }
                    && events.contains { if case .send(1, _) = $0 { return true } else { return false } }
            }
            #expect(all.contains(.receive(0, .posix(.EINVAL))), "events: \(all)")
            #expect(all.contains(.send(1, nil)), "events: \(all)")
            #expect(log.states == [.preparing, .ready])
            #expect(try await offload { try peer.receiveExactly(5) } == Array("early".utf8), "a send queued before start goes out once ready")
            log.connection.cancel()
            try await log.expectCancelledLast()
        }

        @Test("waiting(ECONNREFUSED) when nothing listens; restart() brings it to ready once something does")
        func waitingThenRestart() async throws {
            let port = try freePort()
            let log = EventLog(port: port)
            log.start()
            let waiting = try await log.waitForState("waiting") { $0.isWaiting || $0.isTerminal }
            #expect(waiting == .waiting(.posix(.ECONNREFUSED)))
            #expect(log.connection.state == .waiting(.posix(.ECONNREFUSED)))

            let server = try RawSocket()
            try server.bind(port: port, reuseAddress: true)
            try server.listen()
            log.connection.restart()
            try await log.waitForState("ready after restart") { $0 == .ready || $0.isTerminal }
            #expect(foldingWaitingRetries(log.states) == [.preparing, .waiting(.posix(.ECONNREFUSED)), .preparing, .ready])
            _ = try await offload { try server.accept() }
            log.connection.cancel()
            try await log.expectCancelledLast()
        }

        @Test("waiting(ENOENT) for a UNIX socket path that does not exist; restart() once it does brings ready")
        func unixPathMissingWaits() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nw-unix-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("echo.sock").path
            let log = EventLog(NWConnection(to: .unix(path: path), using: .tcp))
            log.start()
            let waiting = try await log.waitForState("waiting") { $0.isWaiting || $0.isTerminal }
            #expect(waiting == .waiting(.posix(.ENOENT)))

            let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(unixDomainSocketPath: path).get()
            defer { server.close(promise: nil) }
            log.connection.restart()
            try await log.waitForState("ready after restart") { $0 == .ready || $0.isTerminal }
            #expect(foldingWaitingRetries(log.states) == [.preparing, .waiting(.posix(.ENOENT)), .preparing, .ready])
            log.connection.cancel()
            try await log.expectCancelledLast()
        }

        @Test("restart() outside waiting does nothing")
        func restartWhenReadyIsIgnored() async throws {
            let server = try RawSocket.tcpServer()
            let log = EventLog(port: server.localPort)
            log.start()
            try await log.wait(for: .ready)
            log.connection.restart()
            await pause(milliseconds: 200)
            #expect(log.states == [.preparing, .ready])
            log.connection.cancel()
            try await log.expectCancelledLast()
        }

        @Test("an unresolvable name goes to waiting(.dns)")
        func unresolvableNameWaitsWithDNSError() async throws {
            let log = EventLog(NWConnection(host: "does-not-exist.invalid", port: 80, using: .tcp))
            log.start()
            let state = try await log.waitForState("waiting(.dns)", timeout: 20) { $0.isWaiting || $0.isTerminal }
            guard case .waiting(.dns(let code)) = state else {
                Issue.record("expected waiting(.dns(...)), got \(state)")
                log.connection.cancel()
                return
            }
            // NoSuchRecord / NoSuchName for NXDOMAIN; Timeout where no DNS server answers.
            #expect([-65554, -65538, -65568].contains(code), "unexpected DNS-SD code \(code)")
            #expect(log.states.first == .preparing)
            log.connection.cancel()
            try await log.expectCancelledLast()
        }

        @Test("ready → failed(ECONNRESET) when the peer resets; a pending receive gets the error; cancel is still last")
        func peerResetFails() async throws {
            let (log, _, peer) = try await EventLog.readyAgainstRawServer()
            log.receive(0)
            await pause(milliseconds: 50)
            peer.resetAndClose()
            let state = try await log.waitForState("failed") { $0.isTerminal || $0.isWaiting }
            #expect(state == .failed(.posix(.ECONNRESET)))
            let all = try await log.events.wait("receive completion") { events in
                events.contains { if case .receive(0, _) = $0 { return true } else { return false } }
            }
            #expect(all.contains(.receive(0, .posix(.ECONNRESET))), "events: \(all)")
            #expect(log.connection.state == .failed(.posix(.ECONNRESET)))
            // A receive on a failed connection completes with the error.
            let late = try await NWConnection.receiveOne(on: log.connection, minimum: 1, maximum: 10, timeout: 5)
            #expect(late.error == .posix(.ECONNRESET))
            log.connection.cancel()
            try await log.expectCancelledLast()
            #expect(log.states == [.preparing, .ready, .failed(.posix(.ECONNRESET)), .cancelled])
        }

        @Test("ready → failed(ECONNRESET) on a peer reset even with no receive pending")
        func peerResetFailsWithoutPendingReceive() async throws {
            let (log, _, peer) = try await EventLog.readyAgainstRawServer()
            peer.resetAndClose()
            let state = try await log.waitForState("failed") { $0.isTerminal || $0.isWaiting }
            #expect(state == .failed(.posix(.ECONNRESET)))
            log.connection.cancel()
            try await log.expectCancelledLast()
        }

        @Test("a peer that vanishes mid-transfer gives failed(.posix(...)) and failed sends")
        func peerVanishesMidTransfer() async throws {
            let (log, _, peer) = try await EventLog.readyAgainstRawServer()
            // 32 MiB in flight: more than both kernel buffers hold while the peer reads little.
            let chunk = [UInt8](repeating: 0x5A, count: 256 * 1024)
            for index in 0..<128 { log.send(index, chunk) }
            _ = try await offload { try peer.receiveExactly(64 * 1024) }
            peer.resetAndClose()
            let state = try await log.waitForState("failed", timeout: 15) { $0.isTerminal || $0.isWaiting }
            guard case .failed(.posix(let code)) = state else {
                Issue.record("expected failed(.posix(...)), got \(state)")
                log.connection.cancel()
                return
            }
            #expect([.ECONNRESET, .EPIPE].contains(code), "unexpected error \(code)")
            let all = try await log.events.wait("all 128 send completions", timeout: 15) { events in
                events.filter { if case .send = $0 { return true } else { return false } }.count == 128
            }
            let failedSends = all.filter { if case .send(_, let error) = $0 { return error != nil } else { return false } }
            #expect(!failedSends.isEmpty, "sends still queued when the peer vanished must complete with an error")
            let sendOrder = all.compactMap { if case .send(let index, _) = $0 { return index } else { return nil } }
            // (With each completion's error: whether the ones that overtook came early or failed.)
            let sendEvents = all.filter { if case .send = $0 { return true } else { return false } }
            #expect(sendOrder == Array(0..<128), "send completions out of order: \(sendEvents)")
            log.connection.cancel()
            try await log.expectCancelledLast()
        }
    }
}
