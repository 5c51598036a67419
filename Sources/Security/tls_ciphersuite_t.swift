/// A TLS cipher suite, by its IANA number, as the Security framework's `tls_ciphersuite_t`.
///
/// A struct rather than an enumeration so that any registered suite can be named through
/// `init(rawValue:)`, as Apple's peer-to-peer samples do for the PSK suites.
public struct tls_ciphersuite_t: RawRepresentable, Sendable, Equatable, Hashable {
    /// The IANA cipher-suite number.
    public let rawValue: UInt16

    /// Wraps an IANA cipher-suite number (never nil: the optional matches Apple's signature).
    public init?(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    private init(_ value: UInt16) { rawValue = value }

    /// TLS_RSA_WITH_AES_128_GCM_SHA256.
    public static let RSA_WITH_AES_128_GCM_SHA256 = tls_ciphersuite_t(0x009C)
    /// TLS_RSA_WITH_AES_256_GCM_SHA384.
    public static let RSA_WITH_AES_256_GCM_SHA384 = tls_ciphersuite_t(0x009D)
    /// TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256.
    public static let ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 = tls_ciphersuite_t(0xC02B)
    /// TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384.
    public static let ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 = tls_ciphersuite_t(0xC02C)
    /// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256.
    public static let ECDHE_RSA_WITH_AES_128_GCM_SHA256 = tls_ciphersuite_t(0xC02F)
    /// TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384.
    public static let ECDHE_RSA_WITH_AES_256_GCM_SHA384 = tls_ciphersuite_t(0xC030)
    /// TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256.
    public static let ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 = tls_ciphersuite_t(0xCCA9)
    /// TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256.
    public static let ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 = tls_ciphersuite_t(0xCCA8)
    /// TLS 1.3 TLS_AES_128_GCM_SHA256.
    public static let AES_128_GCM_SHA256 = tls_ciphersuite_t(0x1301)
    /// TLS 1.3 TLS_AES_256_GCM_SHA384.
    public static let AES_256_GCM_SHA384 = tls_ciphersuite_t(0x1302)
    /// TLS 1.3 TLS_CHACHA20_POLY1305_SHA256.
    public static let CHACHA20_POLY1305_SHA256 = tls_ciphersuite_t(0x1303)
}

/// The Security framework's cipher-suite constants (`SSLCipherSuite`) most used with the
/// Network framework: the pre-shared-key suites of Apple's peer-to-peer samples.
public let TLS_PSK_WITH_AES_128_GCM_SHA256: UInt16 = 0x00A8
/// TLS_PSK_WITH_AES_256_GCM_SHA384.
public let TLS_PSK_WITH_AES_256_GCM_SHA384: UInt16 = 0x00A9
/// TLS_PSK_WITH_AES_128_CBC_SHA.
public let TLS_PSK_WITH_AES_128_CBC_SHA: UInt16 = 0x008C
/// TLS_PSK_WITH_AES_256_CBC_SHA.
public let TLS_PSK_WITH_AES_256_CBC_SHA: UInt16 = 0x008D
/// TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA.
public let TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA: UInt16 = 0xC035
