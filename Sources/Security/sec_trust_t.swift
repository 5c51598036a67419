/// What a TLS peer presented for evaluation, as the Security framework's `sec_trust_t`: the
/// certificate chain, leaf first, and the host name being verified.
public final class sec_trust_t: Sendable {
    /// The peer's certificates as presented, leaf first.
    public let certificates: [sec_certificate_t]
    /// The name the certificate is checked against, if any.
    public let serverName: String?

    package init(certificates: [sec_certificate_t], serverName: String?) {
        self.certificates = certificates
        self.serverName = serverName
    }
}
