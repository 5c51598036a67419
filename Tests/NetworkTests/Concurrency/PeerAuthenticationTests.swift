import Foundation
import Network
import PeerSupport
import Testing

/// `TLS.PeerAuthentication` and `DTLS.PeerAuthentication` on a `NetworkListener`, with
/// `openssl s_client` as the client (a peer nobody here wrote): `.optional` asks for a client
/// certificate, lets a client without one in, and still checks one that is presented (here with
/// a `certificateValidator` that knows one client); `.required` turns the client without one away.
/// TLS over TCP runs on swift-nio-ssl, DTLS on GnuTLS: both engines are covered.
@Suite("Concurrency.PeerAuthentication", .serialized)
struct PeerAuthenticationTests {
    typealias Identity = TLSInteropTests.Identity

    /// The identities: the listener's, the client it trusts, and a client it does not know.
    struct Identities {
        let server: Identity
        let known: Identity
        let stranger: Identity

        static func make() throws -> Identities {
            Identities(server: try Identity.make(), known: try Identity.make(), stranger: try Identity.make())
        }

        /// The validator a listener uses: only the known client's certificate is trusted.
        var validator: @Sendable (sec_protocol_metadata_t, sec_trust_t) async -> Bool {
            let expected = try? known.certificateDER
            return { _, trust in trust.certificates.first?.derData == expected }
        }
    }

    /// Whether `openssl s_client` with `certificate` (none: no `-cert`) got its line echoed back
    /// through the listener at `port`. It waits until the echo comes or the client exits (a
    /// refused handshake), at most `patience` seconds: an echo takes milliseconds here.
    static func echoed(
        _ openssl: String, port: NWEndpoint.Port, datagram: Bool, certificate: Identity?, line: String, patience: Double
    ) async throws -> Bool {
        var arguments = ["s_client", "-connect", "127.0.0.1:\(port.rawValue)", "-quiet"]
        if datagram { arguments.insert("-dtls1_2", at: 1) }
        if let certificate { arguments += ["-cert", certificate.certificatePath, "-key", certificate.keyPath] }
        let client = try PeerProcess(openssl, arguments, input: Data("\(line)\n".utf8))
        defer { client.stop() }
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(patience) {
            if String(decoding: client.standardOutput, as: UTF8.self).contains(line) { return true }
            if !client.process.isRunning {
                // (Until its output's end is read too: a pipe let go while libdispatch still
                // watches it can crash libdispatch's event loop.)
                _ = await client.waitForExit(timeout: 5)
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return String(decoding: client.standardOutput, as: UTF8.self).contains(line)
    }

    /// Runs the three clients (the known one, one without a certificate, the stranger) against
    /// a listener at `port` and checks who got in.
    static func expectAdmitted(
        _ openssl: String, port: NWEndpoint.Port, datagram: Bool, identities: Identities, withoutCertificate: Bool
    ) async throws {
        #expect(try await echoed(openssl, port: port, datagram: datagram, certificate: identities.known, line: "known client", patience: 15))
        #expect(
            try await echoed(
                openssl, port: port, datagram: datagram, certificate: nil, line: "no certificate", patience: withoutCertificate ? 15 : 3
            ) == withoutCertificate,
            "a client without a certificate \(withoutCertificate ? "must get in" : "must be refused")")
        #expect(
            try await echoed(openssl, port: port, datagram: datagram, certificate: identities.stranger, line: "stranger", patience: 3) == false,
            "a certificate the validator refuses must be refused")
    }

    /// Makes the listener `make` builds from the server identity and the validator, echoing
    /// with `echo`, and runs the three clients against it.
    static func check<ApplicationProtocol: OneToOneProtocol>(
        datagram: Bool, admitsWithoutCertificate: Bool,
        _ make: (sec_identity_t, @escaping @Sendable (sec_protocol_metadata_t, sec_trust_t) async -> Bool) throws
            -> NetworkListener<ApplicationProtocol>,
        echo: @escaping @Sendable (NetworkConnection<ApplicationProtocol>) async throws -> Void
    ) async throws {
        guard let openssl = TLSInteropTests.openssl() else { return }
        let identities = try Identities.make()
        let server = try await RunningListener(try make(try identities.server.secIdentity, identities.validator), handler: echo)
        try await expectAdmitted(
            openssl, port: server.port, datagram: datagram, identities: identities, withoutCertificate: admitsWithoutCertificate)
        _ = await server.stop()
    }

    @Test("TLS over TCP: .optional lets a client without a certificate in and checks one that comes; .required refuses the client without one",
          arguments: [TLS.PeerAuthentication.optional, .required])
    func tls(_ preference: TLS.PeerAuthentication) async throws {
        try await Self.check(datagram: false, admitsWithoutCertificate: preference == .optional, { identity, validator in
            try NetworkListener { TLS().localIdentity(identity).peerAuthentication(preference).certificateValidator(validator) }
        }) { connection in
            while true {
                let (bytes, metadata) = try await connection.receive(atLeast: 1, atMost: 4096)
                if !bytes.isEmpty { try await connection.send(bytes) }
                if metadata.endOfStream { return }
            }
        }
    }

    @Test("DTLS: .optional lets a client without a certificate in and checks one that comes; .required refuses the client without one",
          arguments: [DTLS.PeerAuthentication.optional, .required])
    func dtls(_ preference: DTLS.PeerAuthentication) async throws {
        try await Self.check(datagram: true, admitsWithoutCertificate: preference == .optional, { identity, validator in
            try NetworkListener { DTLS().localIdentity(identity).peerAuthentication(preference).certificateValidator(validator) }
        }) { connection in
            while true {
                let (datagram, _) = try await connection.receive()
                try await connection.send(datagram)
            }
        }
    }
}
