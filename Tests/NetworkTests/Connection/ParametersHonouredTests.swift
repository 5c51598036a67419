import Dispatch
import Foundation
import Network
import PeerSupport
import Testing

/// Parameters that shape where a connection may go, checked over real loopback sockets.
@Suite("Connection.Parameters")
struct ParametersHonouredTests {
    /// A TCP listener on loopback that accepts and holds connections; returns its port.
    private func startListener(_ listener: NWListener) async throws -> NWEndpoint.Port {
        let queue = DispatchQueue(label: "listener")
        let ready = AsyncStream<NWEndpoint.Port?>.makeStream()
        listener.stateUpdateHandler = { state in
            switch state {
            case .ready: ready.continuation.yield(listener.port)
            case .failed: ready.continuation.yield(nil)
            default: break
            }
        }
        listener.newConnectionHandler = { $0.start(queue: queue) }
        listener.start(queue: queue)
        var iterator = ready.stream.makeAsyncIterator()
        return try #require(await iterator.next() ?? nil)
    }

    /// Starts `connection` and returns the first state after `preparing`.
    private func settle(_ connection: NWConnection) async -> NWConnection.State? {
        let states = AsyncStream<NWConnection.State>.makeStream()
        connection.stateUpdateHandler = { states.continuation.yield($0) }
        connection.start(queue: DispatchQueue(label: "client"))
        let timeout = Task {
            try await Task.sleep(for: .seconds(10))
            states.continuation.finish()
        }
        defer { timeout.cancel() }
        for await state in states.stream where state != .preparing {
            return state
        }
        return nil
    }

    @Test func prohibitedLoopbackTypeRefusesLoopbackRoute() async throws {
        let listener = try NWListener(using: .tcp)
        let port = try await startListener(listener)
        defer { listener.cancel() }
        let parameters = NWParameters.tcp
        parameters.prohibitedInterfaceTypes = [.loopback]
        let connection = NWConnection(host: "127.0.0.1", port: port, using: parameters)
        #expect(await settle(connection) == .waiting(.posix(.ENETUNREACH)))
        connection.cancel()
    }

    @Test func requiredLoopbackTypeConnects() async throws {
        let listener = try NWListener(using: .tcp)
        let port = try await startListener(listener)
        defer { listener.cancel() }
        let parameters = NWParameters.tcp
        parameters.requiredInterfaceType = .loopback
        let connection = NWConnection(host: "127.0.0.1", port: port, using: parameters)
        #expect(await settle(connection) == .ready)
        #expect(connection.currentPath?.usesInterfaceType(.loopback) == true)
        connection.cancel()
    }

    @Test func requiredCellularWithNoCellularInterfaceWaits() async throws {
        let parameters = NWParameters.tcp
        parameters.requiredInterfaceType = .cellular
        let connection = NWConnection(host: "127.0.0.1", port: 9, using: parameters)
        #expect(await settle(connection) == .waiting(.posix(.ENETDOWN)))
        connection.cancel()
    }

    @Test func requiredLocalEndpointBindsThatPort() async throws {
        let listener = try NWListener(using: .tcp)
        let port = try await startListener(listener)
        defer { listener.cancel() }
        // Pick a free local port by binding an ephemeral listener and releasing it.
        let probe = try NWListener(using: .tcp)
        let localPort = try await startListener(probe)
        probe.cancel()
        try await Task.sleep(for: .milliseconds(50))
        let parameters = NWParameters.tcp
        parameters.requiredLocalEndpoint = .hostPort(host: "127.0.0.1", port: localPort)
        parameters.allowLocalEndpointReuse = true
        let connection = NWConnection(host: "127.0.0.1", port: port, using: parameters)
        #expect(await settle(connection) == .ready)
        #expect(connection.currentPath?.localEndpoint == .hostPort(host: "127.0.0.1", port: localPort))
        connection.cancel()
    }

    @Test func ipVersionRestrictionFiltersAddresses() async throws {
        let listener = try NWListener(using: .tcp)
        let port = try await startListener(listener)
        defer { listener.cancel() }
        let parameters = NWParameters.tcp
        (parameters.defaultProtocolStack.internetProtocol as? NWProtocolIP.Options)?.version = .v6
        // 127.0.0.1 is IPv4 only: with IPv6 required there is nothing to try.
        let connection = NWConnection(host: "127.0.0.1", port: port, using: parameters)
        let state = await settle(connection)
        #expect(state != .ready)
        connection.cancel()
    }

    @Test func dtlsNeverFallsBackToPlainUDP() async throws {
        // A plain UDP echo server sends our ClientHello straight back: the DTLS client must
        // fail with a TLS error, never become ready or deliver those bytes as data.
        guard let socat = PeerProcess.executable() else { return }
        let port = try freePort(datagram: true)
        let server = try PeerProcess(socat, ["-T", "3", "UDP-RECVFROM:\(port),bind=127.0.0.1,fork", "EXEC:cat"])
        defer { server.stop() }
        try await waitUntilBound(port: port, udp: true)
        let connection = NWConnection(host: "127.0.0.1", port: NWEndpoint.Port(rawValue: port)!, using: .dtls)
        let state = await settle(connection)
        guard case .failed(.tls) = state else {
            Issue.record("expected failed(.tls), got \(String(describing: state))")
            connection.cancel()
            return
        }
        connection.cancel()
    }

    @Test func tlsToAPlaintextServerFailsInsteadOfFallingBack() async throws {
        // A plaintext server that hangs up on whatever arrives: the TLS client must fail.
        let listener = try NWListener(using: .tcp)
        let queue = DispatchQueue(label: "plaintext")
        let ready = AsyncStream<NWEndpoint.Port?>.makeStream()
        listener.stateUpdateHandler = { if $0 == .ready { ready.continuation.yield(listener.port) } }
        listener.newConnectionHandler = { connection in
            connection.start(queue: queue)
            connection.receive(minimumIncompleteLength: 1, maximumLength: 100) { _, _, _, _ in connection.cancel() }
        }
        listener.start(queue: queue)
        var iterator = ready.stream.makeAsyncIterator()
        let port = try #require(await iterator.next() ?? nil)
        defer { listener.cancel() }
        let connection = NWConnection(host: "127.0.0.1", port: port, using: .tls)
        let state = await settle(connection)
        guard case .failed(.tls) = state else {
            Issue.record("expected failed(.tls), got \(String(describing: state))")
            connection.cancel()
            return
        }
        connection.cancel()
    }
}
