import Foundation
import PeerSupport
import Testing

/// The built `nwcat` binary as a TLS server with the identity it makes for itself, checked by
/// OpenSSL (which did not make the certificate) and by `nwcat connect --pin`.
@Suite("TLS.NWCat", .serialized)
struct NWCatTLSTests {
    /// A running `nwcat listen 0 --tls --echo` with the port and pin it announced.
    struct Listener {
        /// The nwcat process.
        let process: ToolProcess
        /// The port the system chose, as nwcat printed it.
        let port: String
        /// The printed pin (empty when nwcat was given --cert/--key and printed none).
        let pin: String

        /// Starts the listener (`extra` adds options) and waits for its announcements.
        static func start(_ nwcat: String, extra: [String] = []) async throws -> Listener {
            let process = try ToolProcess(nwcat, ["listen", "0", "--tls", "--echo"] + extra)
            do {
                let pin = extra.isEmpty ? try await process.waitForStandardError(matching: "--pin ([0-9a-f]{64})") : ""
                let port = try await process.waitForStandardError(matching: "ready on port ([0-9]+)")
                return Listener(process: process, port: port, pin: pin)
            } catch {
                process.stop()
                throw error
            }
        }
    }

    /// The SHA-256 fingerprint OpenSSL computes for `pem`, as lower-case hex without colons.
    static func opensslFingerprint(_ openssl: String, of pem: String) async throws -> String {
        let result = try await ToolProcess.run(openssl, ["x509", "-noout", "-fingerprint", "-sha256"], input: Data(pem.utf8))
        try #require(result.status == 0, "openssl x509: \(result.error)")
        // "sha256 Fingerprint=AB:CD:…" (the prefix's case varies between OpenSSL versions).
        let hex = try #require(result.output.split(separator: "=").last)
        return hex.filter { $0 != ":" && !$0.isWhitespace }.lowercased()
    }

    /// The first PEM certificate in `text`, markers included.
    static func firstCertificate(in text: String) -> String? {
        guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex)
        else { return nil }
        return String(text[begin.lowerBound..<end.upperBound]) + "\n"
    }

    @Test("listen --tls without --cert makes a self-signed P-256 certificate whose printed pin OpenSSL agrees with")
    func selfSignedPinMatchesOpenSSL() async throws {
        guard let nwcat = builtNWCat(), let openssl = PeerProcess.executable("openssl") else { return }
        let listener = try await Listener.start(nwcat)
        defer { listener.process.stop() }
        #expect(!listener.process.standardError.contains("PRIVATE KEY"), "the private key must never be printed")

        let client = try await ToolProcess.run(
            openssl, ["s_client", "-connect", "127.0.0.1:\(listener.port)", "-servername", "localhost"])
        let pem = try #require(Self.firstCertificate(in: client.output), "s_client printed no certificate: \(client.error)")
        #expect(try await Self.opensslFingerprint(openssl, of: pem) == listener.pin)

        let text = try await ToolProcess.run(openssl, ["x509", "-noout", "-text"], input: Data(pem.utf8)).output
        #expect(text.contains("Version: 3"))
        #expect(text.contains("id-ecPublicKey") && (text.contains("P-256") || text.contains("prime256v1")), "\(text)")
        #expect(text.contains("ecdsa-with-SHA256"))
        #expect(text.contains("DNS:localhost") && text.contains("IP Address:127.0.0.1") && text.contains("IP Address:0:0:0:0:0:0:0:1"))
        #expect(text.contains("CA:FALSE"))
        #expect(text.contains("TLS Web Server Authentication"))
        // The CN and first DNS name are the machine's name (the kernel's, as gethostname gives it).
        let hostName = (try? String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "localhost"
        #expect(text.contains("Subject: CN = \(hostName.isEmpty ? "localhost" : hostName)"), "\(text)")
        #expect(text.contains("DNS:\(hostName.isEmpty ? "localhost" : hostName)"))

        // Valid from about an hour ago for 30 days: -checkend passes at 29 days, fails at 31.
        let in29Days = try await ToolProcess.run(openssl, ["x509", "-noout", "-checkend", "\(29 * 86400)"], input: Data(pem.utf8))
        let in31Days = try await ToolProcess.run(openssl, ["x509", "-noout", "-checkend", "\(31 * 86400)"], input: Data(pem.utf8))
        #expect(in29Days.status == 0 && in31Days.status == 1)

        // Two runs never share a key or a certificate.
        let second = try await Listener.start(nwcat)
        defer { second.process.stop() }
        #expect(second.pin != listener.pin)
    }

    @Test("nwcat connect --tls --pin with the printed pin exchanges a line with the self-signed listener")
    func pinnedConnectExchangesLine() async throws {
        guard let nwcat = builtNWCat() else { return }
        let listener = try await Listener.start(nwcat)
        defer { listener.process.stop() }
        let result = try await ToolProcess.run(
            nwcat, ["connect", "--tls", "--pin", listener.pin, "localhost", listener.port], input: Data("hello over tls\n".utf8))
        #expect(result.status == 0, "stderr: \(result.error)")
        #expect(result.output == "hello over tls\n")
        // Upper-case hex names the same certificate.
        let upper = try await ToolProcess.run(
            nwcat, ["connect", "--tls", "--pin", listener.pin.uppercased(), "127.0.0.1", listener.port], input: Data("again\n".utf8))
        #expect(upper.status == 0 && upper.output == "again\n", "stderr: \(upper.error)")
    }

    @Test("a wrong pin fails the handshake with errSSLBadCert and exit status 1; no pin at all is untrusted")
    func wrongPinFails() async throws {
        guard let nwcat = builtNWCat() else { return }
        let listener = try await Listener.start(nwcat)
        defer { listener.process.stop() }
        let wrongPin = String(repeating: "ab", count: 32)
        let wrong = try await ToolProcess.run(
            nwcat, ["connect", "--tls", "--pin", wrongPin, "localhost", listener.port], input: Data("secret\n".utf8))
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("failed: -9808: errSSLBadCert"), "stderr: \(wrong.error)")
        #expect(wrong.output.isEmpty)
        #expect(!listener.process.standardOutput.contains("secret"), "nothing may reach the server unverified")

        // The default (system trust store) does not trust a self-signed certificate either:
        // the pin, or --insecure, is the explicit choice.
        let unpinned = try await ToolProcess.run(nwcat, ["connect", "--tls", "localhost", listener.port])
        #expect(unpinned.status == 1)
        #expect(unpinned.error.contains("failed: -9807: errSSLXCertChainInvalid"), "stderr: \(unpinned.error)")
    }

    @Test("listen --tls --cert/--key still serves the given certificate; --pin of it from OpenSSL connects")
    func explicitCertificateStillWorks() async throws {
        guard let nwcat = builtNWCat(), let openssl = PeerProcess.executable("openssl") else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nwcat-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let made = try await ToolProcess.run(openssl, [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", cert,
        ])
        try #require(made.status == 0, "openssl req: \(made.error)")
        let pin = try await Self.opensslFingerprint(openssl, of: try String(contentsOfFile: cert, encoding: .utf8))

        let listener = try await Listener.start(nwcat, extra: ["--cert", cert, "--key", key])
        defer { listener.process.stop() }
        #expect(!listener.process.standardError.contains("self-signed"), "given files must be used as they are")
        let result = try await ToolProcess.run(
            nwcat, ["connect", "--tls", "--pin", pin, "localhost", listener.port], input: Data("files\n".utf8))
        #expect(result.status == 0 && result.output == "files\n", "stderr: \(result.error)")
    }

    @Test("usage errors: --cert without --key, --pin on listen, --pin with --insecure")
    func usageErrors() async throws {
        guard let nwcat = builtNWCat() else { return }
        let halfIdentity = try await ToolProcess.run(nwcat, ["listen", "0", "--tls", "--cert", "/nonexistent.pem"])
        #expect(halfIdentity.status == 64 && halfIdentity.error.contains("--cert and --key go together"), "\(halfIdentity.error)")
        let pinOnListen = try await ToolProcess.run(nwcat, ["listen", "0", "--tls", "--pin", String(repeating: "0", count: 64)])
        #expect(pinOnListen.status == 64 && pinOnListen.error.contains("--pin applies to connect only"), "\(pinOnListen.error)")
        let both = try await ToolProcess.run(
            nwcat, ["connect", "--tls", "--insecure", "--pin", String(repeating: "0", count: 64), "localhost", "1"])
        #expect(both.status == 64 && both.error.contains("contradict"), "\(both.error)")
    }
}
