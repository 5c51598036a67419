import Dispatch
import Foundation
import PeerSupport
import Testing

@testable import Network

/// PKCS#12 files written by `openssl pkcs12 -export`, read with SecPKCS12Import the way Apple
/// code reads them, and served by an NWListener to `openssl s_client`, which verifies the chain.
@Suite("TLS.SecPKCS12Import", .serialized)
struct SecPKCS12ImportTests {
    @Test func importGivesTheIdentityTheChainAndTheLabel() throws {
        let authority = try TestCertificateAuthority.make()
        let leaf = try authority.issue()
        let file = try authority.pkcs12(leaf, passphrase: "s3cret")
        let leafDER = try leaf.certificateDER

        var items: CFArray?
        let options = [kSecImportExportPassphrase as String: "s3cret"] as CFDictionary
        #expect(SecPKCS12Import(file as CFData, options, &items) == errSecSuccess)
        let array = try #require(items as? [[String: Any]])
        #expect(array.count == 1)
        let item = try #require(array.first)
        let identity = try #require(item[kSecImportItemIdentity as String] as? SecIdentity)
        var certificate: SecCertificate?
        #expect(SecIdentityCopyCertificate(identity, &certificate) == errSecSuccess)
        #expect(certificate.map { SecCertificateCopyData($0) as Data } == leafDER)
        let chain = try #require(item[kSecImportItemCertChain as String] as? [SecCertificate])
        #expect(chain.count == 2)
        #expect(item[kSecImportItemLabel as String] as? String == "localhost")
        #expect(item[kSecImportItemTrust as String] is SecTrust)

        // The sec_* wrapper presents the leaf and the CA; copy_ref hands the identity back.
        let wrapped = try #require(sec_identity_create(identity))
        #expect(wrapped.certificateChain.count == 2)
        #expect(sec_identity_copy_ref(wrapped)?.takeRetainedValue() === identity)
        let leafOnly = try #require(sec_identity_create_with_certificates(identity, [] as CFArray))
        #expect(leafOnly.certificateChain == [leafDER])
    }

    @Test func aWrongPassphraseIsErrSecAuthFailedAndGarbageIsErrSecDecode() throws {
        let authority = try TestCertificateAuthority.make()
        let file = try authority.pkcs12(try authority.issue(), passphrase: "right")
        var items: CFArray?
        let wrong: [String: Any] = [kSecImportExportPassphrase as String: "wrong"]
        #expect(SecPKCS12Import(file as CFData, wrong as CFDictionary, &items) == errSecAuthFailed)
        #expect(items == nil)
        #expect(SecPKCS12Import(Data("not pkcs12".utf8) as CFData, [:] as CFDictionary, &items) == errSecDecode)
        #expect(sec_identity_create_with_pkcs12(file, passphrase: "wrong") == nil)
        #expect(sec_identity_create_with_pkcs12(file, passphrase: "right")?.certificateChain.count == 2)
    }

    @Test("an imported identity serves openssl s_client, which verifies the chain and the host name")
    func importedIdentityServesOpenSSL() async throws {
        guard let openssl = TLSInteropTests.openssl() else { return }
        let authority = try TestCertificateAuthority.make()
        let file = try authority.pkcs12(try authority.issue(), passphrase: "listener")
        var items: CFArray?
        #expect(SecPKCS12Import(file as CFData, [kSecImportExportPassphrase as String: "listener"] as CFDictionary, &items) == errSecSuccess)
        let item = try #require((items as? [[String: Any]])?.first)
        let identity = try #require(item[kSecImportItemIdentity as String] as? SecIdentity)

        let tls = NWProtocolTLS.Options()
        sec_protocol_options_set_local_identity(tls.securityProtocolOptions, try #require(sec_identity_create(identity)))
        let listener = try NWListener(using: NWParameters(tls: tls))
        defer { listener.cancel() }
        let queue = DispatchQueue(label: "p12-listener")
        TLSInteropTests.echoOnce(on: listener, queue: queue)
        let port = try await TLSInteropTests.start(listener, queue: queue)

        let client = try PeerProcess(
            openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-CAfile", authority.certificatePath,
                      "-verify_return_error", "-verify_hostname", "localhost", "-quiet", "-ign_eof"],
            input: Data("from pkcs12\n".utf8))
        defer { client.stop() }
        try await client.waitForOutput(containing: "from pkcs12", timeout: 15)
    }
}
