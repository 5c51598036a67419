import Foundation
import Network
import PeerSupport
import Testing

// How open-source code written for Apple's 2025 API calls it, written again here (their code is
// not copied): a PJLink projector server and client (TCP listener on a fixed port, UDP search
// listener, the four observers, `NetworkChannel<TCP>.State` extended) and a drone controller
// (UDP commands with `using: { UDP() }`, state datagrams on `.parameters { UDP() }.localPort(_:)`).
// That this file compiles in Swift 6 mode is part of the test.

extension NetworkChannel<TCP>.State {
    /// Whether nothing more will happen on the connection (a helper such code defines).
    var isFinished: Bool {
        switch self {
        case .setup, .waiting, .preparing, .ready: false
        case .failed, .cancelled: true
        @unknown default: true
        }
    }
}

extension NetworkListener.State {
    var summary: String {
        switch self {
        case .setup: "setup"
        case .waiting(let error): "waiting \(error)"
        case .ready: "ready"
        case .failed(let error): "failed \(error)"
        case .cancelled: "cancelled"
        @unknown default: "unknown"
        }
    }
}

extension NetworkListener.ServiceRegistrationChange {
    var endpoint: NWEndpoint {
        switch self {
        case .add(let endpoint), .remove(let endpoint): endpoint
        @unknown default: .hostPort(host: .ipv4(.any), port: .any)
        }
    }
}

extension NWEndpoint.Port {
    /// A well-known port as such code declares it (PJLink's; not listened on here).
    static let projector: Self = 4352
}

@Suite("Concurrency.OpenSourceShapes")
struct OpenSourceShapesTests {
    /// A projector: answers `%1POWR ?` with `%1POWR=1` on a TCP listener bound with `.localPort(_:)`.
    static func projector(port: NWEndpoint.Port, log: Recorder<String>) throws -> NetworkListener<TCP> {
        let listener = try NetworkListener(using: .parameters { TCP() }.localPort(port))
        listener.onServiceRegistrationUpdate { listener, change in log.append("registration \(change.endpoint)") }
        listener.onStateUpdate { listener, state in log.append("listener \(state.summary)") }
        return listener
    }

    @Test("PJLink-style: a TCP listener on .localPort(_:), a client with connectionTimeout/persistTimeout, the four observers, receive(atLeast:atMost:) and receive(atMost:), state.isFinished")
    func projectorProtocol() async throws {
        let port = NWEndpoint.Port(rawValue: try freePort())!
        let log = Recorder<String>()
        let listener = try Self.projector(port: port, log: log)
        let server = try await RunningListener(listener) { connection in
            connection.onStateUpdate { connection, state in log.append("server \(connection.id) \(state)") }
            #expect(connection.remoteEndpoint != nil)
            try await connection.send(Data("PJLINK 0\r".utf8))
            while !connection.state.isFinished {
                let request = try await connection.receive(atMost: 136)
                if request.metadata.endOfStream { return }
                try await connection.send(Data("%1POWR=1\r".utf8))
            }
        }
        #expect(server.port == port)

        let connection = NetworkConnection(to: .hostPort(host: "127.0.0.1", port: port)) {
            TCP().connectionTimeout(1).persistTimeout(1)
        }
        connection.onBetterPathUpdate { connection, better in log.append("better path \(better)") }
        connection.onPathUpdate { connection, path in log.append("path \(path.status)") }
        connection.onViabilityUpdate { connection, viable in log.append("viable \(viable)") }
        connection.onStateUpdate { connection, state in
            switch state {
            case .setup, .preparing, .ready, .cancelled: log.append("client \(connection.id) \(state)")
            case .waiting(let error), .failed(let error): log.append("client \(connection.id) error \(error)")
            @unknown default: break
            }
        }
        let greeting = try await connection.receive(atLeast: 9, atMost: 18).content
        #expect(String(decoding: greeting, as: UTF8.self) == "PJLINK 0\r")
        try await connection.send(Data("%1POWR ?\r".utf8))
        #expect(String(decoding: try await connection.receive(atMost: 42).content, as: UTF8.self) == "%1POWR=1\r")
        try await log.wait("client ready and viable") { values in
            values.contains { $0.hasSuffix(" ready") && $0.hasPrefix("client C") } && values.contains("viable true")
        }
        _ = await server.stop()
        let seen = log.values
        #expect(seen.contains("listener ready"), "\(seen)")
    }

    @Test("PJLink-style UDP search: a UDP listener on .localPort(_:) answers each peer's datagram through that peer's connection")
    func search() async throws {
        let port = NWEndpoint.Port(rawValue: try freePort(datagram: true))!
        let server = try await RunningListener(try NetworkListener(using: .parameters { UDP() }.localPort(port))) { connection in
            let host = connection.remoteEndpoint.flatMap { endpoint -> NWEndpoint.Host? in
                if case .hostPort(let host, _) = endpoint { return host }
                return nil
            }
            let request = try await connection.receive().content
            if request == Data("%2SRCH\r".utf8) {
                try await connection.send(Data("%2ACKN=\(host.map { "\($0)" } ?? "?")\r".utf8))
            }
        }
        let searcher = NetworkConnection(to: .hostPort(host: "127.0.0.1", port: port)) { UDP() }
        try await searcher.send(Data("%2SRCH\r".utf8))
        #expect(String(decoding: try await searcher.receive().content, as: UTF8.self) == "%2ACKN=127.0.0.1\r")
        _ = await server.stop()
    }

    /// A drone controller as an actor: its connections are stored when it is made (nothing
    /// starts until the first command).
    actor Drone {
        let commands: NetworkConnection<UDP>
        let state: NetworkConnection<UDP>

        init(port: NWEndpoint.Port, statePort: NWEndpoint.Port) {
            commands = NetworkConnection(to: .hostPort(host: "127.0.0.1", port: port), using: { UDP() })
            state = NetworkConnection(to: .hostPort(host: "127.0.0.1", port: .any), using: .parameters { UDP() } .localPort(statePort))
        }

        func send(_ command: String) async throws -> String {
            try await commands.send(Data(command.utf8))
            return String(decoding: try await commands.receive().content, as: UTF8.self)
        }

        func nextState() async throws -> String {
            String(decoding: try await state.receive().content, as: UTF8.self)
        }
    }

    @Test("drone-style: command/answer over UDP from an actor, state datagrams sent to the controller's .localPort(_:) from the drone's own socket")
    func drone() async throws {
        let statePort = NWEndpoint.Port(rawValue: try freePort(datagram: true))!
        // The drone: answers commands, and after "command" streams its state to statePort.
        let server = try await RunningListener(try NetworkListener { UDP() }) { connection in
            let stateSender = NetworkConnection(to: .hostPort(host: "127.0.0.1", port: statePort)) { UDP() }
            while true {
                let command = String(decoding: try await connection.receive().content, as: UTF8.self)
                try await connection.send(Data("ok".utf8))
                if command == "command" { try await stateSender.send(Data("bat:87;h:0;".utf8)) }
            }
        }
        let drone = Drone(port: server.port, statePort: statePort)
        let stateStates = Recorder<NetworkChannel<UDP>.State>()
        drone.state.onStateUpdate { _, state in stateStates.append(state) }
        async let state = drone.nextState()
        // (The state connection binds its port when its first receive starts it.)
        try await stateStates.wait("the state connection ready") { $0.contains(.ready) }
        #expect(try await drone.send("command") == "ok")
        #expect(try await state == "bat:87;h:0;")
        #expect(try await drone.send("takeoff") == "ok")
        _ = await server.stop()
    }
}
