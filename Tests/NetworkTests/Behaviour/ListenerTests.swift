#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// `NWListener` over TCP and UDP, with raw clients.
    @Suite("Behaviour.Listener")
    struct Listener {
        @Test("port is nil before start for .any, an ephemeral port once ready")
        func anyPortIsEphemeral() async throws {
            let listener = try ListenerProbe()
            #expect(listener.listener.port == nil)
            #expect(listener.listener.state == .setup)
            let port = try await listener.startAndWaitReady()
            #expect(ProcFS.ephemeralPortRange().contains(Int(port)), "port \(port) is not in the ephemeral range")
            #expect(ProcFS.isBound(port: port, udp: false), "nothing listens on the reported port \(port)")
            #expect(listener.listener.state == .ready)
            try await listener.cancelAndWait()
            #expect(listener.states.values == [.ready, .cancelled])
            #expect(listener.listener.state == .cancelled)
            // Cancelled: the port no longer accepts.
            await pause(milliseconds: 100)
            let client = try RawSocket()
            #expect(throws: SocketError.self) { try client.connect(port: port) }
        }

        @Test("inbound connections arrive in setup and read nothing until started")
        func inboundConnectionsStartInSetup() async throws {
            let listener = try ListenerProbe()
            let port = try await listener.startAndWaitReady()
            let client = try RawSocket()
            try await offload { try client.connect(port: port) }
            try client.sendAll(Array("hello".utf8))
            let connection = try await listener.connections.wait(count: 1, "inbound connection")[0]
            #expect(connection.state == .setup)
            if case .hostPort(_, let remotePort) = connection.endpoint {
                #expect(remotePort.rawValue == client.localPort)
            } else {
                Issue.record("inbound endpoint is not host:port: \(connection.endpoint)")
            }

            let results = Recorder<Received>()
            connection.receive(minimumIncompleteLength: 5, maximumLength: 5) { data, context, isComplete, error in
                results.append(Received(data: data, context: context, isComplete: isComplete, error: error))
            }
            await pause(milliseconds: 300)
            #expect(results.count == 0, "a receive on an unstarted connection completed: \(results.values)")
            // The bytes still sit in the kernel's receive queue of the accepted socket.
            let row = ProcFS.sockets().first { $0.localPort == port && $0.remotePort == client.localPort }
            #expect(row?.receiveQueue == 5, "the unstarted connection read from its socket: \(String(describing: row)); rows on the port: \(ProcFS.sockets().filter { $0.localPort == port || $0.remotePort == port })")

            let probeStates = Recorder<NWConnection.State>()
            connection.stateUpdateHandler = { probeStates.append($0) }
            connection.start(queue: DispatchQueue(label: "inbound"))
            let received = try await results.wait(count: 1, "receive after start")[0]
            #expect(received.text == "hello")
            #expect(received.error == nil)
            try await probeStates.wait("ready") { $0.contains(.ready) }
            #expect(probeStates.values == [.preparing, .ready])
            connection.cancel()
            try await probeStates.wait("cancelled") { $0.contains(.cancelled) }
            try await listener.cancelAndWait()
        }

        @Test("newConnectionLimit = 2 hands over exactly two; a third waits until the limit is raised")
        func connectionLimit() async throws {
            let listener = try ListenerProbe()
            listener.listener.newConnectionLimit = 2
            #expect(listener.listener.newConnectionLimit == 2)
            let port = try await listener.startAndWaitReady()
            var clients: [RawSocket] = []
            for index in 0..<3 {
                let client = try RawSocket()
                try await offload { try client.connect(port: port) }
                try client.sendAll([UInt8(index + 1)])
                clients.append(client)
                if index < 2 { try await listener.connections.wait(count: index + 1, "connection \(index + 1)") }
            }
            await pause(milliseconds: 500)
            #expect(listener.connections.count == 2, "handed over \(listener.connections.count) connections with a limit of 2")
            #expect(listener.listener.newConnectionLimit == 0)
            // The third peer is neither refused nor reset: it waits in the backlog.
            let thirdClient = clients[2]
            let third = try await offload { thirdClient.receive(timeout: 0.2) }
            #expect(third == .timedOut, "the third peer should wait, it saw \(third)")

            listener.listener.newConnectionLimit = 1
            let all = try await listener.connections.wait(count: 3, "third connection after raising the limit")
            let connection = all[2]
            connection.start(queue: DispatchQueue(label: "third"))
            let first = try await NWConnection.receiveOne(on: connection, minimum: 1, maximum: 1)
            #expect(first.bytes == [3], "the third connection handed over is the third peer")
            for connection in all { connection.cancel() }
            try await listener.cancelAndWait()
        }

        @Test("a listener on a port in use fails with EADDRINUSE")
        func portInUse() async throws {
            let holder = try RawSocket()
            try holder.bind(anyAddress: true)
            try holder.listen()
            let listener = try ListenerProbe(port: NWEndpoint.Port(rawValue: holder.localPort)!)
            listener.listener.start(queue: listener.queue)
            let states = try await listener.states.wait("listener failed") { !$0.isEmpty }
            #expect(states.first == .failed(.posix(.EADDRINUSE)))
            listener.listener.cancel()
            try await listener.states.wait("cancelled") { $0.contains(.cancelled) }
            #expect(listener.states.values.last == .cancelled)
        }

        @Test("an inbound TCP connection exchanges data both ways")
        func inboundExchange() async throws {
            let queue = DispatchQueue(label: "echo")
            let listener = try ListenerProbe { connection in
                connection.start(queue: queue)
                connection.receive(minimumIncompleteLength: 4, maximumLength: 4) { data, _, _, _ in
                    connection.send(content: data.map { Data($0.reversed()) }, contentContext: .finalMessage, completion: .contentProcessed { _ in })
                }
            }
            let port = try await listener.startAndWaitReady()
            let client = try RawSocket()
            try await offload { try client.connect(port: port) }
            try client.sendAll(Array("abcd".utf8))
            let (bytes, end) = try await offload { client.receiveUntilEnd(timeout: 10) }
            #expect(bytes == Array("dcba".utf8))
            #expect(end == .endOfStream)
            for connection in listener.connections.values { connection.cancel() }
            try await listener.cancelAndWait()
        }

        @Test("a listener on a UNIX socket path (requiredLocalEndpoint .unix) echoes to an NWConnection to that path")
        func unixSocketListener() async throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("nw-unix-listener-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("listener.sock").path
            let parameters = NWParameters.tcp
            parameters.requiredLocalEndpoint = .unix(path: path)
            let queue = DispatchQueue(label: "unix-listener")
            let listener = ListenerProbe(try NWListener(using: parameters)) { connection in
                connection.start(queue: queue)
                connection.receive(minimumIncompleteLength: 5, maximumLength: 5) { data, _, _, _ in
                    connection.send(content: data, completion: .idempotent)
                }
            }
            try await listenerReadyOnPath(listener)
            #expect(listener.listener.port == nil, "a UNIX-domain listener has no port")
            var status = stat()
            #expect(stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK, "no socket at \(path)")

            let client = Probe(NWConnection(to: .unix(path: path), using: .tcp))
            try await client.startAndWaitReady()
            _ = try await client.send(Array("hello".utf8))
            let echoed = try await client.receive(minimum: 5, maximum: 5)
            #expect(echoed.text == "hello")
            try await client.cancelAndWait()
            for connection in listener.connections.values { connection.cancel() }
            try await listener.cancelAndWait()

            // A socket file left behind by an earlier listener is replaced, as servers do.
            let again = ListenerProbe(try NWListener(using: parameters))
            try await listenerReadyOnPath(again)
            try await again.cancelAndWait()

            // Any other file at the path is left alone: the listener fails.
            let filePath = directory.appendingPathComponent("plain-file").path
            #expect(FileManager.default.createFile(atPath: filePath, contents: Data("keep".utf8)))
            let onFile = NWParameters.tcp
            onFile.requiredLocalEndpoint = .unix(path: filePath)
            let refused = ListenerProbe(try NWListener(using: onFile))
            refused.listener.start(queue: refused.queue)
            let failed = try await refused.states.wait("listener failed", timeout: 10) { states in
                states.contains { if case .failed = $0 { return true }; return $0 == .ready }
            }
            #expect(failed.last == .failed(.posix(.EADDRINUSE)), "states: \(failed)")
            #expect(FileManager.default.contents(atPath: filePath) == Data("keep".utf8))
            refused.listener.cancel()

            // Not for UDP, and not with a port: EINVAL at creation.
            let udp = NWParameters.udp
            udp.requiredLocalEndpoint = .unix(path: path)
            #expect(throws: NWError.posix(.EINVAL)) { try NWListener(using: udp) }
            #expect(throws: NWError.posix(.EINVAL)) { try NWListener(using: parameters, on: 4242) }
        }

        /// Starts a listener that has no port to report and waits for `ready`.
        private func listenerReadyOnPath(_ probe: ListenerProbe) async throws {
            probe.listener.start(queue: probe.queue)
            let seen = try await probe.states.wait("listener ready", timeout: 10) { states in
                states.contains { if case .ready = $0 { return true }; if case .failed = $0 { return true }; return false }
            }
            try #require(seen.contains(.ready), "listener did not become ready: \(seen)")
        }

        @Test("UDP listener: two raw clients become two connections; replies leave from the listener's port")
        func udpListenerDemultiplexes() async throws {
            let queue = DispatchQueue(label: "udp-listener")
            let listener = try ListenerProbe(parameters: .udp) { connection in
                connection.start(queue: queue)
                @Sendable func serve() {
                    connection.receiveMessage { data, _, _, error in
                        guard let data, error == nil else { return }
                        connection.send(content: Data("reply-".utf8) + data, completion: .contentProcessed { _ in })
                        serve()
                    }
                }
                serve()
            }
            let port = try await listener.startAndWaitReady()
            let one = try RawSocket.udpPeer()
            let two = try RawSocket.udpPeer()
            try one.send(to: port, Array("one".utf8))
            try two.send(to: port, Array("two".utf8))
            let replyOne = try await offload { try one.receiveFrom(timeout: 10) }
            let replyTwo = try await offload { try two.receiveFrom(timeout: 10) }
            #expect(replyOne?.bytes == Array("reply-one".utf8))
            #expect(replyOne?.port == port, "the reply to client one left from port \(String(describing: replyOne?.port)), not \(port)")
            #expect(replyTwo?.bytes == Array("reply-two".utf8))
            #expect(replyTwo?.port == port, "the reply to client two left from port \(String(describing: replyTwo?.port)), not \(port)")

            // A second datagram from a known peer goes to the same connection.
            try one.send(to: port, Array("again".utf8))
            let again = try await offload { try one.receiveFrom(timeout: 10) }
            #expect(again?.bytes == Array("reply-again".utf8))
            #expect(again?.port == port)

            let connections = listener.connections.values
            #expect(connections.count == 2)
            let remotePorts = Set(connections.compactMap { connection -> UInt16? in
                if case .hostPort(_, let port) = connection.endpoint { return port.rawValue } else { return nil }
            })
            #expect(remotePorts == [one.localPort, two.localPort])
            for connection in connections { connection.cancel() }
            try await listener.cancelAndWait()
        }
    }
}
