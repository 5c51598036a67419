import Foundation

/// A certificate with its private key, as the Security framework's `SecIdentity`. Apple's come
/// from the keychain; here they come from ``SecPKCS12Import(_:_:_:)`` or from a `sec_identity_t`
/// made from PEM or DER (through `sec_identity_copy_ref`).
public final class SecIdentity: Sendable {
    /// The identity's own certificate.
    package let certificate: SecCertificate
    /// The private key, DER (PKCS#8 or the algorithm's own structure).
    package let privateKeyDER: Data
    /// Certificates that came with the identity (a PKCS#12 file's CA certificates), presented
    /// after the leaf by `sec_identity_create`.
    package let intermediates: [SecCertificate]

    package init(certificate: SecCertificate, privateKeyDER: Data, intermediates: [SecCertificate] = []) {
        self.certificate = certificate
        self.privateKeyDER = privateKeyDER
        self.intermediates = intermediates
    }
}

/// Hands out the identity's certificate.
@discardableResult
public func SecIdentityCopyCertificate(
    _ identityRef: SecIdentity, _ certificateRef: UnsafeMutablePointer<SecCertificate?>
) -> OSStatus {
    certificateRef.pointee = identityRef.certificate
    return errSecSuccess
}
