/// A TLS or DTLS protocol version, with the wire values of the Security framework's enumeration.
public enum tls_protocol_version_t: UInt16, Sendable, Equatable, Hashable {
    /// TLS 1.0.
    case TLSv10 = 0x0301
    /// TLS 1.1.
    case TLSv11 = 0x0302
    /// TLS 1.2.
    case TLSv12 = 0x0303
    /// TLS 1.3.
    case TLSv13 = 0x0304
    /// DTLS 1.0.
    case DTLSv10 = 0xfeff
    /// DTLS 1.2.
    case DTLSv12 = 0xfefd
}
