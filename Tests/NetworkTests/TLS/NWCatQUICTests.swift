import Foundation
import PeerSupport
import Testing

@testable import Network

/// `nwcat connect --quic` against aioquic's echo server (`Tests/PeerScripts/quic_peer.py`).
@Suite("TLS.NWCatQUIC", .serialized)
struct NWCatQUICTests {
    /// The SHA-256 of the server's certificate, as `--pin` takes it (from openssl, not our code).
    static func pin(of server: AioquicServer, openssl: String) async throws -> String {
        let digest = try await ToolProcess.run(openssl, ["dgst", "-sha256", "-hex"], input: Data(server.certificate))
        return try #require(digest.output.split(separator: "=").last?.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// What `nwcat connect --quic --alpn echo --pin PIN OPTIONS localhost PORT` did with `input`
    /// against a fresh aioquic server (pinned), and the server, still running (the caller stops
    /// it); nil when a tool is missing.
    static func connect(_ options: [String], input: String) async throws -> (result: (status: Int32?, output: String, error: String), server: AioquicServer, nwcat: String)? {
        guard let nwcat = builtNWCat(), let openssl = PeerProcess.executable("openssl"),
            let server = try await AioquicServer.start()
        else { return nil }
        let pin = try await Self.pin(of: server, openssl: openssl)
        let result = try await ToolProcess.run(
            nwcat, ["connect", "--quic", "--alpn", "echo", "--pin", pin] + options + ["localhost", "\(server.port)"],
            input: Data(input.utf8))
        return (result, server, nwcat)
    }

    @Test("nwcat connect --quic --alpn echo --pin exchanges a line with aioquic and ends with the stream")
    func pinnedConnect() async throws {
        guard let (result, server, nwcat) = try await Self.connect([], input: "hello over quic\n") else { return }
        defer { server.stop() }
        #expect(result.status == 0, "stderr: \(result.error)")
        #expect(result.output == "hello over quic\n")
        // Without the pin the system trust store refuses the self-signed server.
        let refused = try await ToolProcess.run(
            nwcat, ["connect", "--quic", "--alpn", "echo", "localhost", "\(server.port)"], input: Data("x\n".utf8))
        #expect(refused.status != 0)
        #expect(refused.output.isEmpty)
    }

    @Test("nwcat connect --quic --streams 3 sends standard input on three streams of one connection and prints the three echoes; -v names the QUIC streams 0, 4 and 8")
    func severalStreams() async throws {
        guard let (result, server, _) = try await Self.connect(["-v", "--streams", "3"], input: "one line\n") else { return }
        defer { server.stop() }
        #expect(result.status == 0, "stderr: \(result.error)")
        #expect(result.output == String(repeating: "one line\n", count: 3))
        for number in [0, 4, 8] { #expect(result.error.contains("(QUIC stream \(number)) ended"), "\(result.error)") }
        try await server.process.waitForOutput(containing: "closed 0")
    }

    @Test("nwcat connect --quic --datagram sends standard input as one QUIC datagram and prints aioquic's echo of it")
    func datagram() async throws {
        guard let (result, server, _) = try await Self.connect(["--datagram", "--wait", "1"], input: "a quic datagram\n") else { return }
        defer { server.stop() }
        #expect(result.status == 0, "stderr: \(result.error)")
        #expect(result.output == "a quic datagram\n")
    }

    @Test("nwcat listen --quic --alpn echo --echo with --cert/--key serves aioquic's client: 5 streams echoed to their ends")
    func listenEchoes() async throws {
        guard let nwcat = builtNWCat() else { return }
        let identity = try TLSInteropTests.Identity.make()
        let server = try ToolProcess(
            nwcat, ["listen", "0", "--quic", "--alpn", "echo", "--echo", "--cert", identity.certificatePath, "--key", identity.keyPath])
        defer { server.stop() }
        let port = try UInt16(#require(UInt16(try await server.waitForStandardError(matching: "ready on port ([0-9]+)"))))
        guard let client = try await QUICListenerTests.client(port: port, identity: identity, streams: 5) else { return }
        defer { client.stop() }
        try await client.waitForOutput(containing: "done")
        for index in 0..<5 { try await client.waitForOutput(containing: "echo \(index) message \(index)\n") }
    }

    @Test("nwcat refuses --quic without --alpn, and with --udp or --tls; --streams without --quic; --datagram without --quic or with --streams")
    func refusals() async throws {
        guard let nwcat = builtNWCat() else { return }
        for arguments in [
            ["connect", "--quic", "localhost", "4433"],
            ["connect", "--quic", "--alpn", "h3", "--udp", "localhost", "4433"],
            ["connect", "--quic", "--tls", "--alpn", "h3", "localhost", "4433"],
            ["connect", "--streams", "2", "localhost", "4433"],
            ["listen", "0", "--quic"],
            ["connect", "--datagram", "--dtls", "localhost", "4433"],
            ["connect", "--quic", "--datagram", "--alpn", "h3", "--streams", "2", "localhost", "4433"],
        ] {
            let result = try await ToolProcess.run(nwcat, arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.error.contains("quic"), "\(arguments): \(result.error)")
        }
    }
}
