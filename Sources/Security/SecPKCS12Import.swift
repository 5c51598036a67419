import Foundation

/// Options key of ``SecPKCS12Import(_:_:_:)``: the file's passphrase (a `String`).
public let kSecImportExportPassphrase: CFString = "passphrase"
/// Item key: the ``SecIdentity`` (certificate and private key).
public let kSecImportItemIdentity: CFString = "identity"
/// Item key: the certificates, leaf first, as `[SecCertificate]`.
public let kSecImportItemCertChain: CFString = "chain"
/// Item key: a ``SecTrust`` for the chain under the basic X.509 policy.
public let kSecImportItemTrust: CFString = "trust"
/// Item key: the identity certificate's subject summary (a `String`).
public let kSecImportItemLabel: CFString = "label"

/// Reads a PKCS#12 file (as `openssl pkcs12 -export` writes) with GnuTLS. On success `items`
/// holds one dictionary (`[String: Any]`) with ``kSecImportItemIdentity``,
/// ``kSecImportItemCertChain``, ``kSecImportItemTrust`` and ``kSecImportItemLabel``. A wrong
/// passphrase returns ``errSecAuthFailed``; bytes that are not PKCS#12 return ``errSecDecode``.
@discardableResult
public func SecPKCS12Import(
    _ pkcs12Data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>
) -> OSStatus {
    let passphrase = options[AnyHashable(kSecImportExportPassphrase)] as? String
    do {
        let file = try PKCS12File(pkcs12Data, passphrase: passphrase)
        let identity = SecIdentity(
            certificate: file.chain[0], privateKeyDER: file.privateKeyDER, intermediates: Array(file.chain.dropFirst()))
        var item: [String: Any] = [
            kSecImportItemIdentity: identity,
            kSecImportItemCertChain: file.chain,
            kSecImportItemTrust: SecTrust(certificates: file.chain, policies: [SecPolicyCreateBasicX509()]),
        ]
        item[kSecImportItemLabel] = SecCertificateCopySubjectSummary(file.chain[0])
        items.pointee = [item]
        return errSecSuccess
    } catch {
        return error.status
    }
}

/// Makes a `sec_identity_t` straight from a PKCS#12 file (Linux addition: Apple code goes
/// through the keychain or ``SecPKCS12Import(_:_:_:)`` and `sec_identity_create`). Nil when the
/// file does not decode or the passphrase is wrong; call ``SecPKCS12Import(_:_:_:)`` to learn which.
public func sec_identity_create_with_pkcs12(_ data: Data, passphrase: String) -> sec_identity_t? {
    guard let file = try? PKCS12File(data, passphrase: passphrase) else { return nil }
    let identity = SecIdentity(certificate: file.chain[0], privateKeyDER: file.privateKeyDER, intermediates: Array(file.chain.dropFirst()))
    return sec_identity_create(identity)
}

/// The parts of a PKCS#12 file: the certificate chain (leaf first, at least one) and the key.
struct PKCS12File {
    var chain: [SecCertificate]
    var privateKeyDER: Data

    /// Why a file could not be read, as an errSec status.
    struct Failure: Error {
        var status: OSStatus
    }

    init(_ data: Data, passphrase: String?) throws(Failure) {
        var pkcs12: GnuTLSLibrary.Handle?
        guard let gnutls = GnuTLSLibrary.shared, !data.isEmpty, gnutls.pkcs12Init(&pkcs12) == GnuTLSConstant.success, let pkcs12
        else { throw Failure(status: errSecDecode) }
        defer { gnutls.pkcs12Deinit(pkcs12) }
        let imported = GnuTLS.withDatum(data) { gnutls.pkcs12Import(pkcs12, $0, GnuTLSConstant.formatDER, 0) }
        guard imported == GnuTLSConstant.success else { throw Failure(status: errSecDecode) }
        // The MAC proves the passphrase; a file written without one is judged by decryption.
        if gnutls.pkcs12VerifyMAC(pkcs12, passphrase) == GnuTLSConstant.macVerifyFailed { throw Failure(status: errSecAuthFailed) }

        var key: GnuTLSLibrary.Handle?
        var chainList: UnsafeMutablePointer<GnuTLSLibrary.Handle?>?
        var chainCount: UInt32 = 0
        var extras: UnsafeMutablePointer<GnuTLSLibrary.Handle?>?
        var extraCount: UInt32 = 0
        let parsed = gnutls.pkcs12SimpleParse(pkcs12, passphrase, &key, &chainList, &chainCount, &extras, &extraCount, nil, 0)
        defer { if let key { gnutls.privateKeyDeinit(key) } }
        // GnuTLS hands over every certificate it allocated; adopt them so they are freed.
        let leafFirst = Self.adopt(chainList, chainCount, gnutls)
        let others = Self.adopt(extras, extraCount, gnutls)
        guard parsed == GnuTLSConstant.success, let key else {
            let wrongPassphrase = [GnuTLSConstant.decryptionFailed, GnuTLSConstant.macVerifyFailed].contains(parsed)
            throw Failure(status: wrongPassphrase ? errSecAuthFailed : errSecDecode)
        }
        var datum = GnuTLSDatum(data: nil, size: 0)
        guard gnutls.privateKeyExportPKCS8(key, GnuTLSConstant.formatDER, nil, GnuTLSConstant.pkcsPlain, &datum) == GnuTLSConstant.success,
            let keyDER = GnuTLS.take(&datum, gnutls)
        else { throw Failure(status: errSecDecode) }
        let certificates = (leafFirst + others).compactMap { $0.der.map(SecCertificate.init(trusted:)) }
        guard !leafFirst.isEmpty, !certificates.isEmpty else { throw Failure(status: errSecDecode) }
        chain = certificates
        privateKeyDER = keyDER
    }

    /// Wraps a GnuTLS-allocated certificate array (freeing the array itself).
    private static func adopt(
        _ list: UnsafeMutablePointer<GnuTLSLibrary.Handle?>?, _ count: UInt32, _ gnutls: GnuTLSLibrary
    ) -> [GnuTLSCertificate] {
        guard let list else { return [] }
        defer { gnutls.free(list) }
        return (0..<Int(count)).compactMap { index in list[index].map { GnuTLSCertificate(owning: $0, in: gnutls) } }
    }
}
