import Foundation
import PeerSupport
import Testing

/// The default verification (system trust store and host name, no verify block) against
/// `openssl s_server`, with each way a certificate can be wrong mapped to its Security-framework
/// code.
///
/// Those codes only appear for a chain the system store trusts: otherwise every certificate is
/// simply untrusted. swift-nio-ssl reads the store from fixed paths (on Debian
/// /etc/ssl/certs/ca-certificates.crt and /etc/ssl/certs; no environment variable moves it),
/// and the real store must never be changed by a test. So the client is the built `nwcat
/// connect --tls`, run by `unshare --mount` in a private mount namespace where a copy of the
/// system bundle with the test's CA appended is bind-mounted over the bundle file. Only that
/// process sees the CA; the check at the end of each test confirms the real file is untouched.
@Suite("TLS.Verification", .serialized)
struct TLSVerificationErrorTests {
    /// A private CA and certificates it signed, made with GnuTLS's certtool (which, unlike
    /// OpenSSL 3.0's `x509 -req`, takes any validity dates, past or future).
    struct Certificates {
        /// The temporary folder holding every file below.
        let directory: URL
        /// A file in ``directory``.
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        /// The system bundle plus the test CA.
        var bundle: String { path("bundle.crt") }
        /// The private key of every leaf (one key serves them all: only the certificates differ).
        var key: String { path("leaf.key") }

        /// Leaves by name: `good` (localhost, valid now), `wrong-host` (elsewhere.invalid),
        /// `expired` (January 2020), `not-yet-valid` (2099).
        static let leaves: [String: String] = [
            "good": "cn = \"localhost\"\ndns_name = \"localhost\"\nip_address = \"127.0.0.1\"\nexpiration_days = 2\n",
            "wrong-host": "cn = \"elsewhere.invalid\"\ndns_name = \"elsewhere.invalid\"\nexpiration_days = 2\n",
            "expired": "cn = \"localhost\"\ndns_name = \"localhost\"\n"
                + "activation_date = \"2020-01-01 00:00:00 UTC\"\nexpiration_date = \"2020-01-31 00:00:00 UTC\"\n",
            "not-yet-valid": "cn = \"localhost\"\ndns_name = \"localhost\"\n"
                + "activation_date = \"2099-01-01 00:00:00 UTC\"\nexpiration_date = \"2099-02-01 00:00:00 UTC\"\n",
        ]

        /// Makes the CA, the leaves and the bundle in a new temporary folder.
        static func make(certtool: String) async throws -> Certificates {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nwtls-ca-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let made = Certificates(directory: directory)
            func write(_ text: String, _ name: String) throws {
                try text.write(toFile: made.path(name), atomically: true, encoding: .utf8)
            }
            func runCerttool(_ arguments: [String]) async throws {
                let result = try await ToolProcess.run(certtool, arguments)
                try #require(result.status == 0, "certtool \(arguments.joined(separator: " ")): \(result.error)")
            }
            for key in ["ca.key", "leaf.key"] {
                try await runCerttool(["--generate-privkey", "--key-type", "ecdsa", "--curve", "secp256r1", "--outfile", made.path(key)])
            }
            try write("cn = \"nwcat test CA \(UUID().uuidString.prefix(8))\"\nca\ncert_signing_key\nexpiration_days = 2\n", "ca.tmpl")
            try await runCerttool(["--generate-self-signed", "--load-privkey", made.path("ca.key"), "--template", made.path("ca.tmpl"),
                                "--outfile", made.path("ca.pem")])
            for (name, template) in leaves {
                try write(template + "tls_www_server\nsigning_key\n", "\(name).tmpl")
                try await runCerttool(["--generate-certificate", "--load-privkey", made.key,
                                    "--load-ca-certificate", made.path("ca.pem"), "--load-ca-privkey", made.path("ca.key"),
                                    "--template", made.path("\(name).tmpl"), "--outfile", made.path("\(name).pem")])
            }
            let system = try String(contentsOfFile: TLSVerificationErrorTests.systemBundle, encoding: .utf8)
            try write(system + "\n" + (try String(contentsOfFile: made.path("ca.pem"), encoding: .utf8)), "bundle.crt")
            return made
        }
    }

    /// The bundle file swift-nio-ssl loads first on Debian and Ubuntu.
    static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    /// What a test needs: certtool, openssl, nwcat, unshare, and the right to mount in a new
    /// mount namespace (root, or CAP_SYS_ADMIN). Nil, after saying why, when one is missing.
    static func tools() async throws -> (certtool: String, openssl: String, nwcat: String, unshare: String)? {
        guard let certtool = PeerProcess.executable("certtool", package: "gnutls-bin"),
              let openssl = PeerProcess.executable("openssl"),
              let unshare = PeerProcess.executable("unshare", package: "util-linux"),
              let nwcat = builtNWCat()
        else { return nil }
        guard FileManager.default.fileExists(atPath: systemBundle) else {
            PeerProcess.missingPeer("\(systemBundle) is missing: apt-get install -y ca-certificates")
            return nil
        }
        let probe = try await ToolProcess.run(unshare, ["--mount", "--propagation", "private", "true"])
        guard probe.status == 0 else {
            PeerProcess.missingPeer("unshare --mount is not permitted here (needs root or CAP_SYS_ADMIN): \(probe.error)")
            return nil
        }
        return (certtool, openssl, nwcat, unshare)
    }

    /// `openssl s_server` presenting `leaf`, reversing each line (a ToolProcess, so it holds
    /// no descriptor of this process while it runs).
    static func serve(_ openssl: String, _ certificates: Certificates, leaf: String) async throws -> (ToolProcess, String) {
        let port = try freePort()
        let server = try ToolProcess(
            openssl, ["s_server", "-accept", "\(port)", "-cert", certificates.path("\(leaf).pem"), "-key", certificates.key,
                      "-rev", "-quiet"])
        try await waitUntilBound(port: port, udp: false)
        return (server, "\(port)")
    }

    /// `nwcat connect --tls localhost PORT` (default verification), seeing `bundle` as the
    /// system trust store.
    static func connect(
        _ tools: (certtool: String, openssl: String, nwcat: String, unshare: String), trusting bundle: String, port: String,
        input: String = "abc\n"
    ) async throws -> (status: Int32?, output: String, error: String) {
        let script = "mount --bind \"$0\" \(systemBundle) && exec \"$@\""
        return try await ToolProcess.run(
            tools.unshare, ["--mount", "--propagation", "private", "sh", "-c", script, bundle,
                            tools.nwcat, "connect", "--tls", "localhost", port],
            input: Data(input.utf8), timeout: 20)
    }

    /// The real store never holds the test CA.
    static func expectSystemStoreUntouched(_ certificates: Certificates) throws {
        let ca = try String(contentsOfFile: certificates.path("ca.pem"), encoding: .utf8)
        let body = ca.split(separator: "\n").dropFirst().first.map(String.init) ?? ca
        #expect(try !String(contentsOfFile: systemBundle, encoding: .utf8).contains(body))
    }

    @Test("positive control: a certificate from a CA in the (namespaced) system store passes the default verification")
    func trustedCertificateConnects() async throws {
        guard let tools = try await Self.tools() else { return }
        let certificates = try await Certificates.make(certtool: tools.certtool)
        defer { try? FileManager.default.removeItem(at: certificates.directory) }
        let (server, port) = try await Self.serve(tools.openssl, certificates, leaf: "good")
        defer { server.stop() }

        let trusted = try await Self.connect(tools, trusting: certificates.bundle, port: port)
        #expect(trusted.output == "cba\n", "stderr: \(trusted.error)")
        #expect(!trusted.error.contains("failed"), "stderr: \(trusted.error)")

        // The same server with the real store, which lacks the CA: untrusted. So the mount, and
        // nothing else, is what made the chain trusted.
        let untrusted = try await Self.connect(tools, trusting: Self.systemBundle, port: port)
        #expect(untrusted.status == 1)
        #expect(untrusted.error.contains("failed: -9807: errSSLXCertChainInvalid"), "stderr: \(untrusted.error)")
        try Self.expectSystemStoreUntouched(certificates)
    }

    @Test("an expired certificate from a trusted CA fails with errSSLCertExpired (-9814)")
    func expiredCertificate() async throws {
        guard let tools = try await Self.tools() else { return }
        let certificates = try await Certificates.make(certtool: tools.certtool)
        defer { try? FileManager.default.removeItem(at: certificates.directory) }
        let (server, port) = try await Self.serve(tools.openssl, certificates, leaf: "expired")
        defer { server.stop() }

        let result = try await Self.connect(tools, trusting: certificates.bundle, port: port)
        #expect(result.status == 1)
        #expect(result.error.contains("failed: -9814: errSSLCertExpired"), "stderr: \(result.error)")
        #expect(result.output.isEmpty)

        // Expired and untrusted at once: the trust failure is what is reported (as BoringSSL
        // checks the chain before the dates).
        let untrusted = try await Self.connect(tools, trusting: Self.systemBundle, port: port)
        #expect(untrusted.error.contains("failed: -9807: errSSLXCertChainInvalid"), "stderr: \(untrusted.error)")
        try Self.expectSystemStoreUntouched(certificates)
    }

    @Test("a certificate not valid yet fails with errSSLCertNotYetValid (-9815)")
    func notYetValidCertificate() async throws {
        guard let tools = try await Self.tools() else { return }
        let certificates = try await Certificates.make(certtool: tools.certtool)
        defer { try? FileManager.default.removeItem(at: certificates.directory) }
        let (server, port) = try await Self.serve(tools.openssl, certificates, leaf: "not-yet-valid")
        defer { server.stop() }

        let result = try await Self.connect(tools, trusting: certificates.bundle, port: port)
        #expect(result.status == 1)
        #expect(result.error.contains("failed: -9815: errSSLCertNotYetValid"), "stderr: \(result.error)")
    }

    @Test("a trusted certificate for another host name fails with errSSLHostNameMismatch (-9843)")
    func hostNameMismatch() async throws {
        guard let tools = try await Self.tools() else { return }
        let certificates = try await Certificates.make(certtool: tools.certtool)
        defer { try? FileManager.default.removeItem(at: certificates.directory) }
        let (server, port) = try await Self.serve(tools.openssl, certificates, leaf: "wrong-host")
        defer { server.stop() }

        let result = try await Self.connect(tools, trusting: certificates.bundle, port: port)
        #expect(result.status == 1)
        #expect(result.error.contains("failed: -9843: errSSLHostNameMismatch"), "stderr: \(result.error)")
        #expect(result.output.isEmpty, "no data may flow to a server that is not the one named")
        try Self.expectSystemStoreUntouched(certificates)
    }
}
