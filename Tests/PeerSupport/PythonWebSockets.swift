import Foundation
import Testing

/// python websockets 17.4 as the WebSocket tests' peer: the scripts in `Tests/PeerScripts`
/// (`ws_server.py`, `ws_client.py`) run by a python that has it (`PythonPeer`). `scripts/install-deps.sh`
/// installs the package; without it the tests fail under `CI` and say why elsewhere.
public enum PythonWebSockets {
    /// `Tests/PeerScripts`.
    public static let scripts = PythonPeer.scripts

    /// A `python3` that can import websockets 17.4 (nil, with a failure under CI, otherwise).
    public static func python(sourceLocation: SourceLocation = #_sourceLocation) async throws -> String? {
        try await PythonPeer.interpreter(package: "websockets", version: "17.4", sourceLocation: sourceLocation)
    }

    /// `ws_server.py` on 127.0.0.1 (wss with `certificate` and `key`), started; returns it and its
    /// port. Nil when python websockets is missing.
    public static func server(
        certificate: String? = nil, key: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (PeerProcess, UInt16)? {
        guard let python = try await python(sourceLocation: sourceLocation) else { return nil }
        var arguments = [scripts.appendingPathComponent("ws_server.py").path, "127.0.0.1", "0"]
        if let certificate, let key { arguments += ["--cert", certificate, "--key", key] }
        let peer = try PeerProcess(python, arguments)
        try await peer.waitForOutput(containing: "listening ")
        let text = String(decoding: peer.standardOutput, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening ") }),
            let port = UInt16(line.dropFirst("listening ".count))
        else {
            peer.stop()
            throw BehaviourTimeout(what: "the python server's port", seconds: 0)
        }
        return (peer, port)
    }

    /// `ws_client.py URL scenario arguments...` started (it runs to its end by itself). Nil when
    /// python websockets is missing.
    public static func client(
        _ url: String, _ scenario: String, _ arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> PeerProcess? {
        guard let python = try await python(sourceLocation: sourceLocation) else { return nil }
        return try PeerProcess(python, [scripts.appendingPathComponent("ws_client.py").path, url, scenario] + arguments)
    }
}
