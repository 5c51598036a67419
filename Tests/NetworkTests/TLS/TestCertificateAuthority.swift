import Foundation
import PeerSupport
import Testing

@testable import Network

/// A private CA made with `openssl req` for one test, and leaf identities it signs with
/// `openssl x509 -req`: what the Security-API tests need to tell "trusted through our anchor"
/// from "trusted by accident". Leaves go into `TLSInteropTests.Identity` folders so the
/// existing `openssl s_server` helpers serve them.
struct TestCertificateAuthority {
    let directory: URL
    var certificatePath: String { directory.appendingPathComponent("ca.pem").path }
    var keyPath: String { directory.appendingPathComponent("ca.key").path }

    static func make(name: String = "Network Test CA") throws -> TestCertificateAuthority {
        let authority = TestCertificateAuthority(directory: try temporaryDirectory("nwca"))
        try TLSInteropTests.runOpenSSL([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=\(name)", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout", authority.keyPath, "-out", authority.certificatePath,
        ])
        return authority
    }

    /// A leaf for `commonName` with the given subject alternative names (and `usage`, an
    /// extendedKeyUsage value such as `clientAuth`, if given). `expired` makes its validity end
    /// a day before it starts (`-days -1`): expired from the moment it exists.
    func issue(
        commonName: String = "localhost", alternativeNames: String = "DNS:localhost,IP:127.0.0.1", usage: String? = nil,
        expired: Bool = false
    ) throws -> TLSInteropTests.Identity {
        let leaf = TLSInteropTests.Identity(directory: try Self.temporaryDirectory("nwleaf"))
        let request = leaf.directory.appendingPathComponent("req.csr").path
        let extensions = leaf.directory.appendingPathComponent("ext.cnf")
        let usageLine = usage.map { "extendedKeyUsage=\($0)\n" } ?? ""
        try "subjectAltName=\(alternativeNames)\n\(usageLine)".write(to: extensions, atomically: true, encoding: .utf8)
        try TLSInteropTests.runOpenSSL([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-subj", "/CN=\(commonName)", "-keyout", leaf.keyPath, "-out", request,
        ])
        try TLSInteropTests.runOpenSSL([
            "x509", "-req", "-in", request, "-CA", certificatePath, "-CAkey", keyPath,
            "-set_serial", "\(UInt32.random(in: 1...UInt32.max))", "-days", expired ? "-1" : "2",
            "-extfile", extensions.path, "-out", leaf.certificatePath,
        ])
        return leaf
    }

    /// The CA certificate as Apple code holds it.
    var certificate: SecCertificate {
        get throws {
            let pem = try String(contentsOfFile: certificatePath, encoding: .utf8)
            let der = try #require(PEM.blocks(in: pem).first?.der)
            return try #require(SecCertificateCreateWithData(nil, der as CFData))
        }
    }

    /// `identity` packed by `openssl pkcs12 -export` with this CA's certificate, under `passphrase`.
    func pkcs12(_ identity: TLSInteropTests.Identity, passphrase: String) throws -> Data {
        let path = identity.directory.appendingPathComponent("identity.p12").path
        try TLSInteropTests.runOpenSSL([
            "pkcs12", "-export", "-in", identity.certificatePath, "-inkey", identity.keyPath,
            "-certfile", certificatePath, "-passout", "pass:\(passphrase)", "-out", path,
        ])
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    private static func temporaryDirectory(_ prefix: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
