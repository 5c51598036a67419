#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS

/// GnuTLS failures as the Security framework's status codes (see docs/tls.md).
enum GnuTLSErrors {
    /// The error for a failed GnuTLS call; `session` lets a received alert be named.
    static func error(forGnuTLSStatus status: Int32, session: gnutls_session_t?) -> FlowError {
        switch status {
        case GNUTLS_E_FATAL_ALERT_RECEIVED:
            let alert = session.map { Int32(gnutls_alert_get($0).rawValue) } ?? 40
            return .tls(statusForAlert(alert))
        case GNUTLS_E_UNSUPPORTED_VERSION_PACKET:
            return .tls(TLSStatus.peerProtocolVersion)
        case GNUTLS_E_TIMEDOUT:
            return .posix(ETIMEDOUT)
        case GNUTLS_E_LARGE_PACKET:
            return .posix(EMSGSIZE)
        case GNUTLS_E_PREMATURE_TERMINATION:
            return .tls(TLSStatus.closedAbort)
        case GNUTLS_E_INSUFFICIENT_CREDENTIALS, GNUTLS_E_NO_CIPHER_SUITES:
            return .tls(TLSStatus.negotiation)
        case GNUTLS_E_DECRYPTION_FAILED:
            return .tls(TLSStatus.decryptionFailed)
        case GNUTLS_E_CERTIFICATE_REQUIRED:
            return .tls(TLSStatus.peerCertificateRequired)
        case GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR:
            return .tls(TLSStatus.certificateChainInvalid)
        default:
            return .tls(TLSStatus.protocolError)
        }
    }

    /// A fatal alert from the peer, as the matching errSSLPeer… code.
    static func statusForAlert(_ alert: Int32) -> Int32 {
        switch alert {
        case 42: return -9825  // errSSLPeerBadCert
        case 43: return -9826  // errSSLPeerUnsupportedCert
        case 44: return -9827  // errSSLPeerCertRevoked
        case 45: return -9828  // errSSLPeerCertExpired
        case 46: return -9829  // errSSLPeerCertUnknown
        case 47: return -9830  // errSSLIllegalParam
        case 48: return -9831  // errSSLPeerUnknownCA
        case 49: return -9832  // errSSLPeerAccessDenied
        case 50: return -9833  // errSSLPeerDecodeError
        case 51: return -9834  // errSSLPeerDecryptError
        case 70: return TLSStatus.peerProtocolVersion
        case 71: return -9837  // errSSLPeerInsufficientSecurity
        case 80: return -9838  // errSSLPeerInternalError
        case 90: return -9839  // errSSLPeerUserCancelled
        case 100: return -9840  // errSSLPeerNoRenegotiation
        case 116: return TLSStatus.peerCertificateRequired
        default: return TLSStatus.peerHandshakeFailure
        }
    }

    /// A failed certificate check (GnuTLS verification status bits) as one code.
    static func statusForVerification(_ status: UInt32) -> Int32 {
        if status & GNUTLS_CERT_EXPIRED.rawValue != 0 { return TLSStatus.certificateExpired }
        if status & GNUTLS_CERT_NOT_ACTIVATED.rawValue != 0 { return TLSStatus.certificateNotYetValid }
        if status & GNUTLS_CERT_UNEXPECTED_OWNER.rawValue != 0 { return TLSStatus.hostNameMismatch }
        if status & GNUTLS_CERT_REVOKED.rawValue != 0 { return TLSStatus.badCertificate }
        return TLSStatus.certificateChainInvalid
    }
}
