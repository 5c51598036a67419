import Foundation

/// An X.509 certificate, as the Security framework's `SecCertificate`: here it holds the DER
/// bytes it was made from, checked once by GnuTLS so that a `SecCertificate` always parses.
public final class SecCertificate: Sendable {
    /// The certificate in DER form, exactly as it was given.
    package let der: Data

    package init?(validating der: Data) {
        guard GnuTLSCertificate(der: der) != nil else { return nil }
        self.der = der
    }

    /// For bytes a TLS stack or GnuTLS already parsed (no second check).
    package init(trusted der: Data) {
        self.der = der
    }
}

/// Makes a certificate from DER bytes; nil when they are not a certificate. The allocator is
/// ignored (pass nil or `kCFAllocatorDefault`).
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    SecCertificate(validating: data)
}

/// The certificate's DER bytes.
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    certificate.der
}

/// A short human-readable name for the certificate: its subject's common name, else its whole
/// subject name.
public func SecCertificateCopySubjectSummary(_ certificate: SecCertificate) -> CFString? {
    guard let parsed = GnuTLSCertificate(der: certificate.der) else { return nil }
    return parsed.subjectAttribute("2.5.4.3") ?? parsed.subject
}
