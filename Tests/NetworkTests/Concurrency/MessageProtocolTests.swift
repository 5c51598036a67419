import Foundation
import PeerSupport
import Testing

@testable import Network

extension GameFramer: FramerProtocol {}

/// The classic message protocols through the 2025 API: a framer written for `NWProtocolFramer`
/// as `Framer<T>`, and WebSocket against python websockets and against our own listener.
@Suite("Concurrency.MessageProtocols")
struct MessageProtocolTests {
    @Test("Framer<GameFramer> over TCP: each send's framer message reaches the peer's framer, each receive brings the framer's message with its values")
    func framer() async throws {
        let server = try await RunningListener(try NetworkListener { Framer<GameFramer> { TCP() } }) { connection in
            for try await (content, metadata) in connection.messages {
                let reply = NWProtocolFramer.Message(definition: GameFramer.definition)
                reply["type"] = (metadata.message?["type"] as? UInt32 ?? 0) + 100
                try await connection.send(content, metadata: reply)
            }
        }
        let connection = NetworkConnection(to: server.endpoint) { Framer<GameFramer>(using: GameFramer.self) { TCP() } }
        for type in [UInt32(1), 2, 3] {
            let message = NWProtocolFramer.Message(definition: GameFramer.definition)
            message["type"] = type
            try await connection.send(Data("move \(type)".utf8), metadata: message)
        }
        for type in [UInt32(1), 2, 3] {
            let (content, metadata) = try await connection.receive()
            #expect(String(decoding: content, as: UTF8.self) == "move \(type)")
            #expect(metadata.message?["type"] as? UInt32 == type + 100)
            #expect(metadata.other.first is NWProtocolFramer.Message)
        }
        #expect(connection.applicationProtocol.options.framerDefinition.name == "Game")
        _ = await server.stop()
    }

    @Test("WebSocket to python websockets: text and binary echoed with their opcodes, ping() returns with the pong, close(code:) reaches python")
    func webSocketToPython() async throws {
        guard let (python, port) = try await PythonWebSockets.server() else { return }
        defer { python.stop() }
        let url = try #require(URL(string: "ws://127.0.0.1:\(port)/echo"))
        let connection = NetworkConnection(to: .url(url)) { WebSocket { TCP() }.subprotocols(["echo"]) }
        try await connection.send("hello")
        let text = try await connection.receive()
        #expect(String(decoding: text.content, as: UTF8.self) == "hello")
        #expect(text.metadata.opcode == .text)
        try await connection.send(Data([0, 1, 2, 255]))
        let binary = try await connection.receive()
        #expect(binary.content == Data([0, 1, 2, 255]))
        #expect(binary.metadata.opcode == .binary)
        try await withTimeout(seconds: 5, "the pong") { try await connection.ping(Data("are you there".utf8)) }
        try await connection.close(code: .protocolCode(.goingAway), reason: "done")
        try await python.waitForOutput(containing: "closed 1001 done")
    }

    @Test("WebSocket on our listener: messages echoed, a close from the client ends the listener's messages sequence normally")
    func webSocketListener() async throws {
        let ended = Recorder<String>()
        let server = try await RunningListener(try NetworkListener { WebSocket { TCP() } }) { connection in
            do {
                for try await (content, metadata) in connection.messages {
                    if metadata.opcode == .text {
                        try await connection.send(String(decoding: content, as: UTF8.self).uppercased())
                    } else if metadata.opcode == .binary {
                        try await connection.send(content)
                    } else if metadata.opcode == .close {
                        ended.append("close \(metadata.closeCode.map { "\($0)" } ?? "none")")
                    }
                }
                ended.append("end")
            } catch {
                ended.append("error \(error)")
            }
        }
        let url = try #require(URL(string: "ws://127.0.0.1:\(server.port)/game"))
        let connection = NetworkConnection(to: .url(url)) { WebSocket { TCP() } }
        try await connection.send("move e2e4")
        #expect(String(decoding: try await connection.receive().content, as: UTF8.self) == "MOVE E2E4")
        try await connection.send(Data(repeating: 7, count: 100_000))
        #expect(try await connection.receive().content == Data(repeating: 7, count: 100_000))
        try await connection.close()
        let seen = try await ended.wait("the listener's sequence ends") { $0.contains { $0 == "end" || $0.hasPrefix("error") } }
        #expect(seen.last == "end", "\(seen)")
        _ = await server.stop()
    }
    @Test("A TLV message send waiting for a peer that never reads ends at once when its task is cancelled")
    func cancelledTLVSend() async throws {
        let server = try await RunningListener(try NetworkListener { TLV { TCP() } }) { _ in
            try await Task.sleep(for: .seconds(60))
        }
        let connection = NetworkConnection(to: server.endpoint) { TLV { TCP() } }
        let chunk = Data(repeating: 7, count: 64 * 1024)
        try await expectCancelledWaitEndsAtOnce { try await connection.send(chunk, type: 1) }
        try await waitUntil("the connection cancelled", timeout: 10) { connection.state == .cancelled }
        _ = await server.stop()
    }

    @Test("A WebSocket message send waiting for a peer that never reads ends at once when its task is cancelled")
    func cancelledWebSocketSend() async throws {
        let server = try await RunningListener(try NetworkListener { WebSocket { TCP() } }) { _ in
            try await Task.sleep(for: .seconds(60))
        }
        let connection = NetworkConnection(to: server.endpoint) { WebSocket { TCP() } }
        let chunk = Data(repeating: 7, count: 64 * 1024)
        try await expectCancelledWaitEndsAtOnce { try await connection.send(chunk) }
        try await waitUntil("the connection cancelled", timeout: 10) { connection.state == .cancelled }
        _ = await server.stop()
    }
}
