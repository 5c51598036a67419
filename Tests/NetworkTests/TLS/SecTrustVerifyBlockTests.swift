import Dispatch
import Foundation
import PeerSupport
import NetworkSync
import Testing

@testable import Network

/// The verify-block idioms Apple code uses, against `openssl s_server`: the block turns the
/// `sec_trust_t` into a `SecTrust` and judges it with SecTrustEvaluateWithError (private CA) or
/// by comparing certificate bytes (pinning). The trust must already carry the presented chain
/// and an SSL policy naming the connection's host.
@Suite("TLS.SecTrustVerifyBlock", .serialized)
struct SecTrustVerifyBlockTests {
    /// What a verify block saw: its verdict and, when SecTrustEvaluateWithError failed, the code.
    final class Outcome: Sendable {
        let value = Lock<(trusted: Bool, code: Int?)?>(nil)
    }

    /// TLS parameters whose verify block trusts `anchors` only, through the Apple idiom.
    static func anchored(to anchors: [SecCertificate], outcome: Outcome) -> NWParameters {
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
            let secTrust = sec_trust_copy_ref(trust).takeRetainedValue()
            SecTrustSetAnchorCertificates(secTrust, anchors as CFArray)
            var error: CFError?
            let trusted = SecTrustEvaluateWithError(secTrust, &error)
            outcome.value.withLock { $0 = (trusted, (error as Error?).map { ($0 as NSError).code }) }
            complete(trusted)
        }, DispatchQueue(label: "verify-anchored"))
        return NWParameters(tls: tls)
    }

    /// Connects to `identity` served by s_server under `host` and returns the settled state.
    static func connect(to identity: TLSInteropTests.Identity, host: String = "localhost", using parameters: NWParameters) async throws
        -> NWConnection.State?
    {
        guard let (server, port) = try await TLSInteropTests.startServer(identity) else { return nil }
        defer { server.stop() }
        let connection = NWConnection(host: NWEndpoint.Host(host), port: NWEndpoint.Port(rawValue: port)!, using: parameters)
        defer { connection.cancel() }
        let state = await TLSInteropTests.settle(connection)
        if state == .ready { #expect(await TLSInteropTests.exchange(connection, "anchor\n") == "rohcna\n") }
        return state
    }

    @Test("a private CA set with SecTrustSetAnchorCertificates makes the connection ready")
    func privateCertificateAuthority() async throws {
        let authority = try TestCertificateAuthority.make()
        let outcome = Outcome()
        let state = try await Self.connect(to: try authority.issue(), using: Self.anchored(to: [try authority.certificate], outcome: outcome))
        #expect(state == .ready)
        #expect(outcome.value.withLock { $0 }?.trusted == true)
        // The address literal is the name checked when the connection targets one.
        let byAddress = Outcome()
        let addressState = try await Self.connect(
            to: try authority.issue(), host: "127.0.0.1", using: Self.anchored(to: [try authority.certificate], outcome: byAddress))
        #expect(addressState == .ready)
    }

    @Test("another CA's anchor rejects the server: errSecNotTrusted in the block, errSSLBadCert on the connection")
    func wrongCertificateAuthority() async throws {
        let authority = try TestCertificateAuthority.make()
        let other = try TestCertificateAuthority.make(name: "Someone Else")
        let outcome = Outcome()
        let state = try await Self.connect(to: try authority.issue(), using: Self.anchored(to: [try other.certificate], outcome: outcome))
        #expect(state == .failed(.tls(-9808)))
        #expect(outcome.value.withLock { $0 }?.code == Int(errSecNotTrusted))
    }

    @Test("an expired certificate: SecTrustEvaluateWithError is false with errSecCertificateExpired")
    func expiredCertificate() async throws {
        let authority = try TestCertificateAuthority.make()
        let outcome = Outcome()
        let state = try await Self.connect(
            to: try authority.issue(expired: true), using: Self.anchored(to: [try authority.certificate], outcome: outcome))
        #expect(state == .failed(.tls(-9808)))
        #expect(outcome.value.withLock { $0 }?.trusted == false)
        #expect(outcome.value.withLock { $0 }?.code == Int(errSecCertificateExpired))
    }

    @Test("a certificate for another host: false with errSecHostNameMismatch (the trust names the connection's host)")
    func hostNameMismatch() async throws {
        let authority = try TestCertificateAuthority.make()
        let outcome = Outcome()
        let leaf = try authority.issue(commonName: "other.example", alternativeNames: "DNS:other.example")
        let state = try await Self.connect(to: leaf, using: Self.anchored(to: [try authority.certificate], outcome: outcome))
        #expect(state == .failed(.tls(-9808)))
        #expect(outcome.value.withLock { $0 }?.code == Int(errSecHostNameMismatch))

        // With sec_protocol_options_set_tls_server_name the trust checks that name instead.
        let named = Outcome()
        let parameters = Self.anchored(to: [try authority.certificate], outcome: named)
        let options = try #require(parameters.defaultProtocolStack.applicationProtocols.first as? NWProtocolTLS.Options)
        sec_protocol_options_set_tls_server_name(options.securityProtocolOptions, "other.example")
        #expect(try await Self.connect(to: leaf, using: parameters) == .ready)
    }

    @Test("pinning through SecTrustCopyCertificateChain and SecCertificateCopyData")
    func pinning() async throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue()
        func pinned(to expected: Data) -> NWParameters {
            let tls = NWProtocolTLS.Options()
            sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
                let secTrust = sec_trust_copy_ref(trust).takeRetainedValue()
                guard let chain = SecTrustCopyCertificateChain(secTrust) as? [SecCertificate], let first = chain.first else {
                    complete(false)
                    return
                }
                complete(SecCertificateCopyData(first) as Data == expected)
            }, DispatchQueue(label: "verify-pinned"))
            return NWParameters(tls: tls)
        }
        #expect(try await Self.connect(to: leaf, using: pinned(to: try leaf.certificateDER)) == .ready)
        #expect(try await Self.connect(to: leaf, using: pinned(to: try authority.issue().certificateDER)) == .failed(.tls(-9808)))
    }

    @Test("without anchors the block's evaluation matches default verification: a self-signed server is not trusted")
    func noAnchorsMatchesDefault() async throws {
        let outcome = Outcome()
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
            var error: CFError?
            let trusted = SecTrustEvaluateWithError(sec_trust_copy_ref(trust).takeRetainedValue(), &error)
            outcome.value.withLock { $0 = (trusted, error?.code) }
            complete(trusted)
        }, DispatchQueue(label: "verify-default"))
        let state = try await Self.connect(to: try TLSInteropTests.Identity.make(), using: NWParameters(tls: tls))
        #expect(state == .failed(.tls(-9808)))
        #expect(outcome.value.withLock { $0 }?.code == Int(errSecNotTrusted))
    }

    @Test("a listener checks client certificates against a private CA with SecTrustEvaluateWithError")
    func listenerTrustsClientsOfItsCertificateAuthority() async throws {
        guard let openssl = TLSInteropTests.openssl() else { return }
        let serverIdentity = try TLSInteropTests.Identity.make()
        let clients = try TestCertificateAuthority.make(name: "Client CA")
        // A client-only certificate (extendedKeyUsage clientAuth) naming no host the server could
        // check: it passes only if the trust carries the client SSL policy, without a name.
        let client = try clients.issue(commonName: "device-17", alternativeNames: "DNS:device-17.invalid", usage: "clientAuth")
        let stranger = try TestCertificateAuthority.make(name: "Stranger CA").issue(commonName: "device-99")
        let clientCA = try clients.certificate
        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_local_identity(tls.securityProtocolOptions, try serverIdentity.secIdentity)
        sec_protocol_options_set_peer_authentication_required(tls.securityProtocolOptions, true)
        sec_protocol_options_set_verify_block(tls.securityProtocolOptions, { _, trust, complete in
            let secTrust = sec_trust_copy_ref(trust).takeRetainedValue()
            SecTrustSetAnchorCertificates(secTrust, [clientCA] as CFArray)
            complete(SecTrustEvaluateWithError(secTrust, nil))
        }, DispatchQueue(label: "verify-clients"))
        let listener = try NWListener(using: NWParameters(tls: tls))
        defer { listener.cancel() }
        let queue = DispatchQueue(label: "client-ca-listener")
        TLSInteropTests.echoOnce(on: listener, queue: queue)
        let port = try await TLSInteropTests.start(listener, queue: queue)

        let trusted = try PeerProcess(
            openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-quiet", "-ign_eof",
                      "-cert", client.certificatePath, "-key", client.keyPath],
            input: Data("member\n".utf8))
        defer { trusted.stop() }
        try await trusted.waitForOutput(containing: "member", timeout: 15)

        let refused = try PeerProcess(
            openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-quiet", "-ign_eof",
                      "-cert", stranger.certificatePath, "-key", stranger.keyPath],
            input: Data("stranger\n".utf8))
        defer { refused.stop() }
        _ = await refused.waitForExit(timeout: 10)
        #expect(!String(decoding: refused.standardOutput, as: UTF8.self).contains("stranger"))
    }
}
