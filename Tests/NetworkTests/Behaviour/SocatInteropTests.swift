#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Network
import PeerSupport
import Testing

extension BehaviourTests {
    /// Interop with socat, in both roles, over TCP and UDP.
    @Suite("Behaviour.Socat")
    struct SocatInterop {
        @Test("TCP client ↔ socat echo server, including a clean half-close")
        func tcpClientToSocatEcho() async throws {
            guard let socat = PeerProcess.executable() else { return }
            let port = try freePort()
            let server = try PeerProcess(socat, ["TCP-LISTEN:\(port),bind=127.0.0.1,reuseaddr,fork", "EXEC:cat"])
            defer { server.stop() }
            try await waitUntilBound(port: port, udp: false)

            let probe = Probe(port: port)
            try await probe.startAndWaitReady()
            let message = pattern(10_000, seed: 5)
            #expect(try await probe.send(message) == nil)
            var echoed: [UInt8] = []
            while echoed.count < message.count {
                let chunk = try await probe.receive(minimum: 1, maximum: 65_536)
                try #require(chunk.error == nil && !chunk.bytes.isEmpty, "echo stopped early: \(chunk)")
                echoed += chunk.bytes
            }
            #expect(echoed == message)
            // Our final message ends cat's input; cat exits and socat closes its side.
            #expect(try await probe.send(nil, context: .finalMessage, isComplete: true) == nil)
            let end = try await probe.receive(minimum: 1, maximum: 100)
            #expect(end.isComplete == true)
            #expect(end.bytes.isEmpty)
            #expect(end.error == nil)
            try await probe.cancelAndWait()
        }

        @Test("UDP client ↔ socat echo server")
        func udpClientToSocatEcho() async throws {
            guard let socat = PeerProcess.executable() else { return }
            let port = try freePort(datagram: true)
            let server = try PeerProcess(socat, ["-T", "3", "UDP-RECVFROM:\(port),bind=127.0.0.1,fork", "EXEC:cat"])
            defer { server.stop() }
            try await waitUntilBound(port: port, udp: true)

            let probe = Probe(port: port, parameters: .udp)
            try await probe.startAndWaitReady()
            #expect(try await probe.send(Array("ping over udp\n".utf8)) == nil)
            let reply = try await probe.receiveMessage()
            #expect(reply.text == "ping over udp\n")
            #expect(reply.isComplete == true)
            #expect(reply.error == nil)
            try await probe.cancelAndWait()
        }

        @Test("socat as a TCP client of our listener")
        func socatTCPClientToListener() async throws {
            guard let socat = PeerProcess.executable() else { return }
            let received = Recorder<String>()
            let queue = DispatchQueue(label: "socat-tcp-listener")
            let listener = try ListenerProbe { connection in
                connection.start(queue: queue)
                @Sendable func read(_ soFar: Data) {
                    connection.receive(minimumIncompleteLength: 1, maximumLength: 1024) { data, _, isComplete, error in
                        let all = soFar + (data ?? Data())
                        if all.contains(UInt8(ascii: "\n")) || isComplete || error != nil {
                            received.append(String(decoding: all, as: UTF8.self))
                            connection.send(
                                content: Data("reply from NWListener\n".utf8), contentContext: .finalMessage,
                                completion: .contentProcessed { _ in })
                        } else {
                            read(all)
                        }
                    }
                }
                read(Data())
            }
            let port = try await listener.startAndWaitReady()
            let client = try PeerProcess(socat, ["-t", "5", "-", "TCP:127.0.0.1:\(port)"], input: Data("hello\n".utf8))
            defer { client.stop() }
            let got = try await received.wait(count: 1, "listener received socat's data")
            #expect(got[0] == "hello\n")
            try await client.waitForOutput(containing: "reply from NWListener\n")
            let status = await client.waitForExit(timeout: 10)
            #expect(status == 0, "socat should exit cleanly once both sides closed")
            for connection in listener.connections.values { connection.cancel() }
            try await listener.cancelAndWait()
        }

        @Test("socat as a UDP client of our listener")
        func socatUDPClientToListener() async throws {
            guard let socat = PeerProcess.executable() else { return }
            let received = Recorder<String>()
            let queue = DispatchQueue(label: "socat-udp-listener")
            let listener = try ListenerProbe(parameters: .udp) { connection in
                connection.start(queue: queue)
                connection.receiveMessage { data, _, isComplete, error in
                    received.append(String(decoding: data ?? Data(), as: UTF8.self))
                    connection.send(content: Data("udp reply\n".utf8), completion: .contentProcessed { _ in })
                }
            }
            let port = try await listener.startAndWaitReady()
            let client = try PeerProcess(socat, ["-t", "5", "-", "UDP:127.0.0.1:\(port)"], input: Data("hello\n".utf8))
            defer { client.stop() }
            let got = try await received.wait(count: 1, "listener received socat's datagram")
            #expect(got[0] == "hello\n")
            try await client.waitForOutput(containing: "udp reply\n")
            #expect(listener.connections.count == 1)
            for connection in listener.connections.values { connection.cancel() }
            try await listener.cancelAndWait()
        }
    }
}
