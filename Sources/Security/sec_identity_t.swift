import Foundation

/// A certificate chain with its private key, as the Security framework's `sec_identity_t`: a
/// ``SecIdentity`` plus the certificates to present.
///
/// Apple makes identities from the keychain (`sec_identity_create(SecIdentity)`). Linux has no
/// keychain: ``SecPKCS12Import(_:_:_:)`` gives a ``SecIdentity``, and this package adds
/// ``sec_identity_create_with_pkcs12(_:passphrase:)``,
/// ``sec_identity_create_with_pem(certificateChain:privateKey:)`` and
/// ``sec_identity_create_with_der(certificateChain:privateKey:)``.
public final class sec_identity_t: Sendable {
    /// The certificates, leaf first, in DER form.
    public let certificateChain: [Data]
    /// The wrapped identity (what `sec_identity_copy_ref` hands out).
    package let identity: SecIdentity
    /// The private key, DER (PKCS#8 or the algorithm's own structure).
    package var privateKeyDER: Data { identity.privateKeyDER }

    /// `certificateChain` must not be empty (the creating functions check).
    init(certificateChain: [Data], privateKeyDER: Data) {
        self.certificateChain = certificateChain
        let certificates = certificateChain.map(SecCertificate.init(trusted:))
        identity = SecIdentity(
            certificate: certificates.first ?? SecCertificate(trusted: Data()), privateKeyDER: privateKeyDER,
            intermediates: Array(certificates.dropFirst()))
    }

    init(_ identity: SecIdentity, presenting certificates: [SecCertificate]) {
        self.identity = identity
        certificateChain = certificates.map(\.der)
    }
}

/// Wraps a ``SecIdentity``: its certificate is presented, followed by any certificates it came
/// with (a PKCS#12 file's CA certificates). Never nil here; optional as on Apple platforms.
public func sec_identity_create(_ identity: SecIdentity) -> sec_identity_t? {
    sec_identity_t(identity, presenting: [identity.certificate] + identity.intermediates)
}

/// Wraps a ``SecIdentity`` that presents `certificates` (``SecCertificate``s): the identity's
/// own certificate first, then these (a leading copy of the identity's certificate is not
/// repeated). Nil if the array holds anything but certificates.
public func sec_identity_create_with_certificates(_ identity: SecIdentity, _ certificates: CFArray) -> sec_identity_t? {
    let chain = certificates.compactMap { $0 as? SecCertificate }
    guard chain.count == certificates.count else { return nil }
    let rest = chain.first?.der == identity.certificate.der ? Array(chain.dropFirst()) : chain
    return sec_identity_t(identity, presenting: [identity.certificate] + rest)
}

/// The ``SecIdentity`` inside; balance it with `takeRetainedValue()`.
public func sec_identity_copy_ref(_ identity: sec_identity_t) -> Unmanaged<SecIdentity>? {
    Unmanaged.passRetained(identity.identity)
}

/// Makes an identity from DER certificates (leaf first) and a DER private key.
public func sec_identity_create_with_der(certificateChain: [Data], privateKey: Data) -> sec_identity_t? {
    guard !certificateChain.isEmpty, !privateKey.isEmpty else { return nil }
    return sec_identity_t(certificateChain: certificateChain, privateKeyDER: privateKey)
}

/// Makes an identity from PEM text: one or more `CERTIFICATE` blocks (leaf first) and one
/// private key block (`PRIVATE KEY`, `EC PRIVATE KEY` or `RSA PRIVATE KEY`). Nil if either is
/// missing or not valid base64.
public func sec_identity_create_with_pem(certificateChain: String, privateKey: String) -> sec_identity_t? {
    let certificates = PEM.blocks(in: certificateChain).filter { $0.label == "CERTIFICATE" }.map(\.der)
    guard let key = PEM.blocks(in: privateKey).first(where: { $0.label.hasSuffix("PRIVATE KEY") }) else { return nil }
    return sec_identity_create_with_der(certificateChain: certificates, privateKey: key.der)
}

/// Minimal PEM reader: finds `-----BEGIN X-----` … `-----END X-----` blocks.
package enum PEM {
    package struct Block {
        package var label: String
        package var der: Data
    }

    package static func blocks(in text: String) -> [Block] {
        var blocks: [Block] = []
        var label: String?
        var body = ""
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                label = String(line.dropFirst(11).dropLast(5))
                body = ""
            } else if line.hasPrefix("-----END "), let current = label {
                if let der = Data(base64Encoded: body) { blocks.append(Block(label: current, der: der)) }
                label = nil
            } else if label != nil {
                body += line
            }
        }
        return blocks
    }
}
