import Foundation

/// A certificate chain with its private key, as the Security framework's `sec_identity_t`.
///
/// Apple makes identities from the keychain (`sec_identity_create(SecIdentity)`). Linux has no
/// keychain, so this package adds ``sec_identity_create_with_pem(certificateChain:privateKey:)``
/// and ``sec_identity_create_with_der(certificateChain:privateKey:)``.
public final class sec_identity_t: Sendable {
    /// The certificates, leaf first, in DER form.
    public let certificateChain: [Data]
    /// The private key, DER (PKCS#8 or the algorithm's own structure).
    package let privateKeyDER: Data

    init(certificateChain: [Data], privateKeyDER: Data) {
        self.certificateChain = certificateChain
        self.privateKeyDER = privateKeyDER
    }
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
