import Foundation
import Testing

/// A fresh self-signed P-256 certificate for localhost and 127.0.0.1, made by openssl (not our
/// code) in a directory of its own: the PEM files a server loads and the DER a client pins.
public struct SelfSignedCertificate: Sendable {
    public let directory: URL
    public var certificatePath: String { directory.appendingPathComponent("cert.pem").path }
    public var keyPath: String { directory.appendingPathComponent("key.pem").path }
    /// The certificate (DER), for clients that pin it.
    public let der: [UInt8]

    /// Makes one with `openssl`; `#require` fails the test when openssl refuses.
    public static func make(openssl: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> SelfSignedCertificate {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nwcert-\(UUID().uuidString)")
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
        return SelfSignedCertificate(directory: directory, der: Array(try Data(contentsOf: URL(fileURLWithPath: cert + ".der"))))
    }

    /// Removes the files.
    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
