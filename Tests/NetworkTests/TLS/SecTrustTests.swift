import Foundation
import Security
import Testing

@testable import Network

/// SecCertificate / SecPolicy / SecTrust on their own (no connection), written the way Apple
/// code writes them: the `as CFData` / `as CFArray` / `as? [SecCertificate]` casts must compile
/// and GnuTLS must reach Apple's verdicts and errSec codes.
@Suite("TLS.SecTrust")
struct SecTrustTests {
    /// A trust for `identity`'s certificate under `policy`, anchored at `anchors` (nil: the system's roots).
    static func trust(_ identity: TLSInteropTests.Identity, policy: SecPolicy, anchors: [SecCertificate]?) throws -> SecTrust {
        let leaf = try #require(SecCertificateCreateWithData(nil, try identity.certificateDER as CFData))
        var trust: SecTrust?
        #expect(SecTrustCreateWithCertificates([leaf] as CFArray, policy, &trust) == errSecSuccess)
        let created = try #require(trust)
        if let anchors { #expect(SecTrustSetAnchorCertificates(created, anchors as CFArray) == errSecSuccess) }
        return created
    }

    /// Evaluates and returns the verdict with the error code (nil when trusted).
    static func evaluate(_ trust: SecTrust) -> (Bool, Int?) {
        var error: CFError?
        let trusted = SecTrustEvaluateWithError(trust, &error)
        return (trusted, (error as Error?).map { ($0 as NSError).code })
    }

    @Test func certificatesRoundTripTheirBytes() throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue(commonName: "api.example")
        let der = try leaf.certificateDER
        let certificate = try #require(SecCertificateCreateWithData(kCFAllocatorDefault, der as CFData))
        #expect(SecCertificateCopyData(certificate) as Data == der)
        #expect(Array(SecCertificateCopyData(certificate) as Data) == Array(der))
        #expect(SecCertificateCopySubjectSummary(certificate) as String? == "api.example")
        #expect(SecCertificateCreateWithData(nil, Data([0x30, 0x03, 0x02, 0x01, 0x01]) as CFData) == nil)
        #expect(SecCertificateCreateWithData(nil, Data() as CFData) == nil)

        // The sec_* wrappers hand back the very same object.
        let wrapped = try #require(sec_certificate_create(certificate))
        #expect(sec_certificate_copy_ref(wrapped).takeRetainedValue() === certificate)
        #expect(sec_certificate_copy_data(wrapped) == der)
    }

    @Test func privateAnchorsHostNamesAndTheSystemStore() throws {
        let authority = try TestCertificateAuthority.make()
        let other = try TestCertificateAuthority.make(name: "Someone Else")
        let leaf = try authority.issue()
        let ca = try authority.certificate

        #expect(Self.evaluate(try Self.trust(leaf, policy: SecPolicyCreateSSL(true, "localhost"), anchors: [ca])) == (true, nil))
        #expect(Self.evaluate(try Self.trust(leaf, policy: SecPolicyCreateSSL(true, "127.0.0.1"), anchors: [ca])) == (true, nil))
        #expect(Self.evaluate(try Self.trust(leaf, policy: SecPolicyCreateSSL(true, nil), anchors: [ca])) == (true, nil))
        #expect(
            Self.evaluate(try Self.trust(leaf, policy: SecPolicyCreateSSL(true, "example.com"), anchors: [ca]))
                == (false, Int(errSecHostNameMismatch)))
        // The basic policy does not look at names; a client-certificate policy neither.
        #expect(Self.evaluate(try Self.trust(leaf, policy: SecPolicyCreateBasicX509(), anchors: [ca])) == (true, nil))
        #expect(Self.evaluate(try Self.trust(leaf, policy: SecPolicyCreateSSL(false, nil), anchors: [ca])) == (true, nil))
        // Another CA, or the system's roots alone, do not vouch for it.
        #expect(
            Self.evaluate(try Self.trust(leaf, policy: SecPolicyCreateSSL(true, "localhost"), anchors: [try other.certificate]))
                == (false, Int(errSecNotTrusted)))
        #expect(
            Self.evaluate(try Self.trust(leaf, policy: SecPolicyCreateSSL(true, "localhost"), anchors: nil))
                == (false, Int(errSecNotTrusted)))

        // Our anchor plus the system's roots still trusts it.
        let both = try Self.trust(leaf, policy: SecPolicyCreateSSL(true, "localhost"), anchors: [ca])
        #expect(SecTrustSetAnchorCertificatesOnly(both, false) == errSecSuccess)
        #expect(Self.evaluate(both) == (true, nil))
        // Policies can be replaced after creation.
        #expect(SecTrustSetPolicies(both, [SecPolicyCreateSSL(true, "nope.example")] as CFArray) == errSecSuccess)
        #expect(Self.evaluate(both) == (false, Int(errSecHostNameMismatch)))
    }

    @Test func sslPoliciesCheckTheKeyPurpose() throws {
        let authority = try TestCertificateAuthority.make()
        let ca = try authority.certificate
        let clientOnly = try authority.issue(usage: "clientAuth")
        #expect(Self.evaluate(try Self.trust(clientOnly, policy: SecPolicyCreateSSL(false, nil), anchors: [ca])) == (true, nil))
        #expect(Self.evaluate(try Self.trust(clientOnly, policy: SecPolicyCreateSSL(true, "localhost"), anchors: [ca])).0 == false)
        let serverOnly = try authority.issue(usage: "serverAuth")
        #expect(Self.evaluate(try Self.trust(serverOnly, policy: SecPolicyCreateSSL(true, "localhost"), anchors: [ca])) == (true, nil))
        #expect(Self.evaluate(try Self.trust(serverOnly, policy: SecPolicyCreateSSL(false, nil), anchors: [ca])).0 == false)
    }

    @Test func expiredCertificatesReportErrSecCertificateExpired() throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue(expired: true)
        let trust = try Self.trust(leaf, policy: SecPolicyCreateSSL(true, "localhost"), anchors: [try authority.certificate])
        var error: CFError?
        #expect(!SecTrustEvaluateWithError(trust, &error))
        #expect(error?.code == Int(errSecCertificateExpired))
        #expect(error.map(CFErrorGetCode) == CFIndex(errSecCertificateExpired))
        #expect(error?.domain == NSOSStatusErrorDomain)
    }

    @Test func theChainIsReadBackAsApplesAccessorsDo() async throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue()
        let ca = try authority.certificate
        let leafCertificate = try #require(SecCertificateCreateWithData(nil, try leaf.certificateDER as CFData))
        var trust: SecTrust?
        #expect(SecTrustCreateWithCertificates([leafCertificate, ca] as CFArray, nil, &trust) == errSecSuccess)
        let created = try #require(trust)
        #expect(SecTrustGetCertificateCount(created) == 2)
        #expect(SecTrustGetCertificateAtIndex(created, 0) === leafCertificate)
        #expect(SecTrustGetCertificateAtIndex(created, 2) == nil)
        let chain = try #require(SecTrustCopyCertificateChain(created) as? [SecCertificate])
        let expected = [try leaf.certificateDER, SecCertificateCopyData(ca) as Data]
        #expect(chain.map { SecCertificateCopyData($0) as Data } == expected)

        // A single certificate (not an array) is accepted too; anything else is errSecParam.
        var single: SecTrust?
        #expect(SecTrustCreateWithCertificates(leafCertificate, SecPolicyCreateBasicX509(), &single) == errSecSuccess)
        var nothing: SecTrust?
        #expect(SecTrustCreateWithCertificates([] as CFArray, nil, &nothing) == errSecParam)
        #expect(SecTrustCreateWithCertificates(["text"] as CFArray, nil, &nothing) == errSecParam)

        // The asynchronous form, as verify blocks often call it.
        _ = SecTrustSetAnchorCertificates(created, [ca] as CFArray)
        let verdict: Bool = await withCheckedContinuation { continuation in
            SecTrustEvaluateAsyncWithError(created, DispatchQueue(label: "evaluate")) { _, trusted, _ in
                continuation.resume(returning: trusted)
            }
        }
        #expect(verdict)

        // sec_trust_t wraps the same object both ways.
        let wrapped = try #require(sec_trust_create(created))
        #expect(sec_trust_copy_ref(wrapped).takeRetainedValue() === created)
        #expect(wrapped.certificates.count == 2)
    }
}
