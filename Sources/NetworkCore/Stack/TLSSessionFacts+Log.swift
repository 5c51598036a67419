import Logging

extension TLSSessionFacts {
    /// What a handshake negotiated, as log metadata: version, suite, ALPN, how many
    /// certificates the peer showed. Nothing secret is part of the facts.
    var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = [
            "tls_version": "\(Self.versionName(version))",
            // swift-nio-ssl does not report the suite BoringSSL chose; GnuTLS does.
            "cipher_suite": "\(cipherSuite.map(Self.hex) ?? "unreported")",
            "peer_certificates": "\(peerCertificates.count)",
        ]
        if let negotiatedProtocol { metadata["alpn"] = "\(negotiatedProtocol)" }
        return metadata
    }

    static func versionName(_ wire: UInt16?) -> String {
        switch wire {
        case 0x0301: return "TLS1.0"
        case 0x0302: return "TLS1.1"
        case 0x0303: return "TLS1.2"
        case 0x0304: return "TLS1.3"
        case 0xfeff: return "DTLS1.0"
        case 0xfefd: return "DTLS1.2"
        case let other?: return hex(other)
        case nil: return "unknown"
        }
    }

    /// `0x1301`: suites are known by their IANA numbers.
    static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
