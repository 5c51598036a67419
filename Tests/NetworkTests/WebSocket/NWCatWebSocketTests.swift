import Foundation
import PeerSupport
import Testing

/// The built `nwcat` in WebSocket mode against python websockets (which nobody here wrote):
/// `connect --ws URL` as a client of its echo server, and `listen --ws --echo` as the server of
/// its client.
@Suite("WebSocket.NWCat", .serialized)
struct NWCatWebSocketTests {
    @Test("nwcat connect --ws: each input chunk is a text message, the echo is printed, the end of input closes with 1000")
    func connectSendsLinesAndClosesNormally() async throws {
        guard let nwcat = builtNWCat(), let (server, port) = try await PythonWebSockets.server() else { return }
        defer { server.stop() }
        let result = try await ToolProcess.run(
            nwcat, ["connect", "--ws", "ws://127.0.0.1:\(port)/echo"], input: Data("hello from nwcat\n".utf8),
            timeout: SanitizerSlowdown.seconds(20))
        #expect(result.status == 0, "nwcat: \(result.error)")
        #expect(result.output == "hello from nwcat\n", "\(result.output.debugDescription)")
        // The server saw our close: 1000, normal closure.
        try await server.waitForOutput(containing: "closed 1000")
    }

    @Test("nwcat listen --ws --echo: python's text and binary messages come back with their kinds; its close ends the connection")
    func listenEchoesMessages() async throws {
        guard let nwcat = builtNWCat() else { return }
        let listener = try ToolProcess(nwcat, ["listen", "0", "--ws", "--echo"])
        defer { listener.stop() }
        let port = try await listener.waitForStandardError(matching: "ready on port ([0-9]+)")
        guard let client = try await PythonWebSockets.client("ws://127.0.0.1:\(port)/", "echo") else { return }
        defer { client.stop() }
        try await client.waitForOutput(containing: "done", timeout: SanitizerSlowdown.seconds(15))
        let seen = String(decoding: client.standardOutput, as: UTF8.self)
        #expect(seen.contains("text hello text"), "\(seen)")
        #expect(seen.contains("binary \(Data("\u{0}\u{1}binary".utf8).map { String(format: "%02x", $0) }.joined())"), "\(seen)")
        // nwcat printed both messages, the text one on its own line.
        #expect(listener.standardOutput.hasPrefix("hello text\n"), "\(listener.standardOutput.debugDescription)")
        #expect(listener.standardOutput.contains("\u{0}\u{1}binary"))
    }

    @Test("nwcat connect --ws refuses a URL that is not ws:// or wss://, and HOST PORT beside it")
    func connectValidatesTheURL() async throws {
        guard let nwcat = builtNWCat() else { return }
        let wrongScheme = try await ToolProcess.run(nwcat, ["connect", "--ws", "http://127.0.0.1:1/"])
        #expect(wrongScheme.status != 0 && wrongScheme.error.contains("ws://"), "\(wrongScheme.error)")
        let both = try await ToolProcess.run(nwcat, ["connect", "127.0.0.1", "1", "--ws", "ws://127.0.0.1:1/"])
        #expect(both.status != 0 && both.error.contains("replaces HOST PORT"), "\(both.error)")
    }
}
