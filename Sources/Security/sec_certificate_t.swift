import Foundation

/// A certificate, as the Security framework's `sec_certificate_t` object: here, its DER bytes.
public final class sec_certificate_t: Sendable {
    /// The certificate in DER form.
    public let derData: Data

    /// Wraps a DER-encoded certificate.
    public init(derData: Data) {
        self.derData = derData
    }
}

/// The DER bytes of `certificate` (Linux counterpart of `SecCertificateCopyData`).
public func sec_certificate_copy_data(_ certificate: sec_certificate_t) -> Data {
    certificate.derData
}
