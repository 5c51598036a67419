#if canImport(Glibc)
import Glibc
#endif

extension FlowError {
    /// The error for a log line: its domain, code and, where known, a name
    /// (`posix 111 ECONNREFUSED (Connection refused)`, `tls -9807 certificate chain invalid`).
    var logDescription: String {
        switch self {
        case .posix(let code):
            return "posix \(code) (\(String(cString: strerror(code))))"
        case .dns(let code):
            return "dns \(code)" + (Self.dnsNames[code].map { " \($0)" } ?? "")
        case .tls(let code):
            return "tls \(code)" + (Self.tlsNames[code].map { " \($0)" } ?? "")
        }
    }

    private static let dnsNames: [Int32: String] = [
        DNSServiceCode.unknown: "(unknown)", DNSServiceCode.noSuchName: "(no such name)",
        DNSServiceCode.noSuchRecord: "(no such record)", DNSServiceCode.badParam: "(bad parameter)",
        DNSServiceCode.timeout: "(timed out)", DNSServiceCode.noMemory: "(no memory)",
        DNSServiceCode.refused: "(server refused)", DNSServiceCode.transient: "(server failure)",
        DNSServiceCode.unsupported: "(not implemented by the server)", DNSServiceCode.invalid: "(malformed reply)",
    ]

    private static let tlsNames: [Int32: String] = [
        TLSStatus.protocolError: "(protocol error)", TLSStatus.closedGraceful: "(closed gracefully)",
        TLSStatus.closedAbort: "(connection closed during the handshake)", TLSStatus.negotiation: "(no common parameters)",
        TLSStatus.certificateChainInvalid: "(certificate chain not trusted)", TLSStatus.badCertificate: "(certificate refused)",
        TLSStatus.unknownRootCertificate: "(unknown root certificate)", TLSStatus.certificateExpired: "(certificate expired)",
        TLSStatus.certificateNotYetValid: "(certificate not yet valid)", TLSStatus.peerHandshakeFailure: "(peer reported a handshake failure)",
        TLSStatus.peerProtocolVersion: "(no common protocol version)", TLSStatus.hostNameMismatch: "(host name mismatch)",
        TLSStatus.decryptionFailed: "(decryption failed)", TLSStatus.peerCertificateRequired: "(certificate required)",
    ]
}
