/// What a TLS peer presented for evaluation, as the Security framework's `sec_trust_t`: a
/// wrapper around a ``SecTrust`` that holds the presented chain (leaf first) and an SSL policy
/// naming the host the connection verifies. So `SecTrustEvaluateWithError` on
/// `sec_trust_copy_ref(trust).takeRetainedValue()` reaches the verdict default verification
/// would, and anchors set on it first turn it into private-CA verification.
public final class sec_trust_t: Sendable {
    /// The peer's certificates as presented, leaf first.
    public let certificates: [sec_certificate_t]
    /// The name the certificate is checked against, if any.
    public let serverName: String?
    /// The wrapped trust (what `sec_trust_copy_ref` hands out).
    package let trust: SecTrust

    /// A trust for a presented chain. `server` says whose chain it is: true for a server's (the
    /// client verifies it, against `serverName`), false for a client's (a server verifies it).
    package init(certificates: [sec_certificate_t], serverName: String?, server: Bool = true) {
        self.certificates = certificates
        self.serverName = serverName
        trust = SecTrust(
            certificates: certificates.map(\.certificate), policies: [SecPolicyCreateSSL(server, server ? serverName : nil)])
    }

    package init(_ trust: SecTrust) {
        let state = trust.state.withLock { $0 }
        certificates = state.certificates.map(sec_certificate_t.init)
        serverName = state.policies.lazy.compactMap { policy -> String? in
            if case .ssl(_, let hostname) = policy.kind { return hostname }
            return nil
        }.first
        self.trust = trust
    }
}

/// Wraps a ``SecTrust`` for the `sec_*` API (never nil here; optional as on Apple platforms).
public func sec_trust_create(_ trust: SecTrust) -> sec_trust_t? {
    sec_trust_t(trust)
}

/// The ``SecTrust`` inside (the same object each time); balance it with `takeRetainedValue()`.
public func sec_trust_copy_ref(_ trust: sec_trust_t) -> Unmanaged<SecTrust> {
    Unmanaged.passRetained(trust.trust)
}
