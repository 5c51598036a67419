#if canImport(Glibc)
import Glibc
#endif
import CNGTCP2

/// How QUIC's failures become the errors connections report (docs/quic.md has the table):
/// TLS alerts as TLS codes, the rest as POSIX codes, as Apple's framework reports them.
enum QUICErrors {
    /// CRYPTO_ERROR carrying the bad_certificate alert (RFC 9001, 4.8): the code this side
    /// closes with when it refuses the peer's certificate.
    static let badCertificate: UInt64 = 0x100 + 42

    /// ngtcp2 failed on this side (`status` is an NGTCP2_ERR_ code); `alert` is the TLS alert
    /// GnuTLS raised, if any.
    static func local(_ status: Int32, alert: UInt8 = 0) -> FlowError {
        switch status {
        case NGTCP2_ERR_CRYPTO:
            return .tls(alert == 0 ? TLSStatus.protocolError : GnuTLSErrors.statusForAlert(Int32(alert)))
        case NGTCP2_ERR_IDLE_CLOSE, NGTCP2_ERR_HANDSHAKE_TIMEOUT:
            return .posix(ETIMEDOUT)
        case NGTCP2_ERR_RECV_VERSION_NEGOTIATION, NGTCP2_ERR_VERSION_NEGOTIATION,
            NGTCP2_ERR_VERSION_NEGOTIATION_FAILURE:
            return .posix(EPROTONOSUPPORT)
        case NGTCP2_ERR_NOMEM:
            return .posix(ENOMEM)
        case NGTCP2_ERR_NOBUF:
            return .posix(ENOBUFS)
        case NGTCP2_ERR_NO_VIABLE_PATH:
            return .posix(ENETUNREACH)
        default:
            // The peer broke the protocol (malformed frames, flow control, stream limits...).
            return .posix(EPROTO)
        }
    }

    /// The peer closed the connection with `error` (its CONNECTION_CLOSE): nil for an orderly
    /// close (NO_ERROR, or application code 0).
    static func peerClosed(_ error: ngtcp2_connection_close_error) -> FlowError? {
        switch error.type {
        case NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION:
            return error.error_code == 0 ? nil : .posix(ECONNABORTED)
        case NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_TRANSPORT_IDLE_CLOSE:
            return .posix(ETIMEDOUT)
        case NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_TRANSPORT_VERSION_NEGOTIATION:
            return .posix(EPROTONOSUPPORT)
        default:
            if error.error_code == UInt64(NGTCP2_NO_ERROR) { return nil }
            if error.error_code & ~0xff == UInt64(NGTCP2_CRYPTO_ERROR) {
                // The peer's TLS stack refused the handshake with this alert.
                return .tls(GnuTLSErrors.statusForAlert(Int32(error.error_code & 0xff)))
            }
            return .posix(ECONNRESET)
        }
    }
}
