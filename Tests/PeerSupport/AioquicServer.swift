import Foundation
import Testing

/// aioquic 1.7.2 serving `Tests/PeerScripts/quic_peer.py` on 127.0.0.1 (ALPN "echo"; what it does
/// with each stream is described in the script) with a fresh self-signed certificate for
/// localhost and 127.0.0.1. Nil, with a failure under CI, when aioquic or openssl is missing.
public struct AioquicServer: Sendable {
    public let process: PeerProcess
    public let port: Int
    /// The server's certificate (DER), for tests that pin it.
    public let certificate: [UInt8]
    let directory: URL

    /// With `namespace`, the server runs inside it, on `host` (an address of the namespace);
    /// with `datagrams` false, it announces no QUIC datagram support; with `tickets`, it issues
    /// session tickets and takes 0-RTT data; `port` 0 lets the system choose.
    public static func start(
        retry: Bool = false, datagrams: Bool = true, tickets: Bool = false, host: String = "127.0.0.1", port: Int = 0,
        namespace: TestNamespace? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> AioquicServer? {
        guard let python = try await PythonPeer.interpreter(package: "aioquic", version: "1.7.2", sourceLocation: sourceLocation),
            let openssl = PeerProcess.executable("openssl", package: "openssl", sourceLocation: sourceLocation)
        else { return nil }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nwquic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cert = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        let made = try ShortTool.run(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", key, "-out", cert,
        ])
        try #require(made.status == 0, "openssl req: \(made.output)", sourceLocation: sourceLocation)
        let der = try ShortTool.run(openssl, ["x509", "-in", cert, "-outform", "DER", "-out", cert + ".der"])
        try #require(der.status == 0, "openssl x509: \(der.output)", sourceLocation: sourceLocation)
        let script = PythonPeer.scripts.appendingPathComponent("quic_peer.py").path
        let arguments = [script, host, "\(port)", "--cert", cert, "--key", key] + (retry ? ["--retry"] : [])
            + (datagrams ? [] : ["--no-datagrams"]) + (tickets ? ["--tickets"] : [])
        let process = try namespace.map { try PeerProcess($0.ip, ["netns", "exec", $0.name, python] + arguments) }
            ?? PeerProcess(python, arguments)
        // The whole line: "listening" and the number may arrive in separate writes.
        let deadline = Date().addingTimeInterval(20)
        var port: Int?
        while port == nil && Date() < deadline {
            let output = String(decoding: process.standardOutput, as: UTF8.self)
            port = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { line -> Int? in
                line.hasPrefix("listening ") ? Int(line.dropFirst("listening ".count)) : nil
            }.first
            if port == nil { await pause(milliseconds: 20) }
        }
        return AioquicServer(
            process: process, port: try #require(port, sourceLocation: sourceLocation),
            certificate: Array(try Data(contentsOf: URL(fileURLWithPath: cert + ".der"))), directory: directory)
    }

    /// Stops the server and removes its certificate.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
