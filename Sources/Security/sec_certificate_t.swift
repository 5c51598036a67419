import Foundation

/// A certificate, as the Security framework's `sec_certificate_t` object: a wrapper around a
/// ``SecCertificate``.
public final class sec_certificate_t: Sendable {
    /// The certificate in DER form.
    public var derData: Data { certificate.der }
    /// The wrapped certificate (what `sec_certificate_copy_ref` hands out).
    package let certificate: SecCertificate

    /// Wraps a DER-encoded certificate.
    public init(derData: Data) {
        certificate = SecCertificate(trusted: derData)
    }

    package init(_ certificate: SecCertificate) {
        self.certificate = certificate
    }
}

/// The DER bytes of `certificate` (Linux counterpart of `SecCertificateCopyData`).
public func sec_certificate_copy_data(_ certificate: sec_certificate_t) -> Data {
    certificate.derData
}

/// Wraps a ``SecCertificate`` for the `sec_*` API (never nil here; optional as on Apple platforms).
public func sec_certificate_create(_ certificate: SecCertificate) -> sec_certificate_t? {
    sec_certificate_t(certificate)
}

/// The ``SecCertificate`` inside; balance it with `takeRetainedValue()`.
public func sec_certificate_copy_ref(_ certificate: sec_certificate_t) -> Unmanaged<SecCertificate> {
    Unmanaged.passRetained(certificate.certificate)
}
