#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a proxy could not be used. The connection itself fails with ``flowError`` (what users of
/// `NWError` see); the case keeps the detail for logs and the establishment report.
///
/// Authentication problems of either protocol are `EACCES`: the proxy was reached and refused
/// us, which is neither a network failure (nothing to retry on a path change) nor a protocol
/// bug. Linux has no `EAUTH`; `EACCES` ("permission denied") is the errno closest to "the
/// proxy wants (other) credentials".
package enum ProxyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The SOCKS5 proxy accepts none of the methods offered (no credential given, or it does
    /// not do user/password). `EACCES`.
    case socksNoAcceptableMethod
    /// The SOCKS5 proxy rejected the user name or password (RFC 1929 status). `EACCES`.
    case socksAuthenticationFailed(status: UInt8)
    /// The SOCKS5 proxy refused the CONNECT. The errno follows the reply code.
    case socksReply(SOCKS5ReplyCode)
    /// An HTTP proxy answered 407 (or 401, as tinyproxy does for wrong credentials): it wants
    /// credentials (none were given) or did not accept the ones given. `EACCES`.
    case httpProxyAuthenticationRequired(credentialSent: Bool)
    /// An HTTP proxy answered the CONNECT with a status other than 2xx or 407. See
    /// ``httpStatusErrno(_:)``.
    case httpStatus(Int)
    /// The proxy's answer does not follow its protocol. `EPROTO`.
    case malformedResponse(String)
    /// The proxy's HTTP response head grew past the limit before it ended. `EMSGSIZE`.
    case responseTooLarge(limit: Int)
    /// The proxy closed the connection (or reset it) before the tunnel was up. `ECONNRESET`.
    case closedDuringHandshake
    /// The proxy did not finish the handshake in time. `ETIMEDOUT`.
    case timedOut
    /// The destination cannot be expressed to this proxy (a UNIX path, or a name longer than
    /// SOCKS5's 255 bytes or with characters that do not belong in a host name). `EINVAL`.
    case invalidTarget(String)
    /// The credential cannot be sent: longer than 255 bytes for SOCKS5, or a user name with a
    /// colon for HTTP Basic. `EINVAL`.
    case invalidCredential(String)
    /// A proxy URL from the environment could not be understood. `EINVAL`.
    case invalidProxyURL(String)
    /// The proxy kind is recognised but not implemented here (MASQUE relays,
    /// Oblivious HTTP, SOCKS4). `EPROTONOSUPPORT`.
    case unsupported(String)

    /// The errno an HTTP CONNECT status becomes: 401 and 407 are `EACCES` (authentication),
    /// 403 is `EACCES` too (the proxy's policy forbids
    /// this destination); 502 and 503 are `ECONNREFUSED` (the proxy could not reach the
    /// destination, what squid and tinyproxy answer when the destination refuses); 504 is
    /// `ETIMEDOUT`; anything else is `EPROTO` (the proxy did not do what was asked).
    package static func httpStatusErrno(_ status: Int) -> Int32 {
        switch status {
        case 401, 403, 407: return EACCES
        case 502, 503: return ECONNREFUSED
        case 504: return ETIMEDOUT
        default: return EPROTO
        }
    }

    /// The error the connection fails with.
    package var flowError: FlowError {
        switch self {
        case .socksNoAcceptableMethod, .socksAuthenticationFailed, .httpProxyAuthenticationRequired:
            return .posix(EACCES)
        case .socksReply(let code): return .posix(code.errno)
        case .httpStatus(let status): return .posix(Self.httpStatusErrno(status))
        case .malformedResponse: return .posix(EPROTO)
        case .responseTooLarge: return .posix(EMSGSIZE)
        case .closedDuringHandshake: return .posix(ECONNRESET)
        case .timedOut: return .posix(ETIMEDOUT)
        case .invalidTarget, .invalidCredential, .invalidProxyURL: return .posix(EINVAL)
        case .unsupported: return .posix(EPROTONOSUPPORT)
        }
    }

    /// A sentence for logs; never contains credentials.
    package var description: String {
        switch self {
        case .socksNoAcceptableMethod:
            return "SOCKS5 proxy accepts none of the offered authentication methods"
        case .socksAuthenticationFailed(let status):
            return "SOCKS5 proxy rejected the user name or password (status \(status))"
        case .socksReply(let code):
            return "SOCKS5 proxy refused the connection: \(code)"
        case .httpProxyAuthenticationRequired(let sent):
            return sent
                ? "HTTP proxy rejected the credentials (407)"
                : "HTTP proxy requires authentication (407) and no credentials were given"
        case .httpStatus(let status):
            return "HTTP proxy answered CONNECT with status \(status)"
        case .malformedResponse(let why):
            return "proxy sent a malformed response: \(why)"
        case .responseTooLarge(let limit):
            return "proxy response head exceeds \(limit) bytes"
        case .closedDuringHandshake:
            return "proxy closed the connection before the tunnel was established"
        case .timedOut:
            return "proxy did not complete the handshake in time"
        case .invalidTarget(let why):
            return "destination cannot be sent to the proxy: \(why)"
        case .invalidCredential(let why):
            return "proxy credential cannot be sent: \(why)"
        case .invalidProxyURL(let why):
            return "invalid proxy URL: \(why)"
        case .unsupported(let what):
            return "unsupported proxy: \(what)"
        }
    }
}
