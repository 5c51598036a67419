/// A named set of TLS cipher suites, as the Security framework's `tls_ciphersuite_group_t`.
public enum tls_ciphersuite_group_t: UInt16, Sendable, Equatable, Hashable {
    /// The platform's recommended suites.
    case `default`
    /// The recommended suites plus older ones still widely deployed.
    case compatibility
    /// Suites kept only for very old peers.
    case legacy
    /// The suites App Transport Security allows.
    case ats
    /// The ATS suites plus their compatibility additions.
    case ats_compatibility
}
