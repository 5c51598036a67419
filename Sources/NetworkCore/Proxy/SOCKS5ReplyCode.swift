#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The REP field of a SOCKS5 reply (RFC 1928 §6), with the errno a connection fails with when
/// the proxy answers with it. The mapping follows what the same failure would give on a direct
/// connection, so code that handles `ECONNREFUSED` or `EHOSTUNREACH` keeps working through a
/// proxy.
package struct SOCKS5ReplyCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package var rawValue: UInt8

    package init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    package static let succeeded = SOCKS5ReplyCode(rawValue: 0x00)
    package static let generalFailure = SOCKS5ReplyCode(rawValue: 0x01)
    package static let notAllowedByRuleset = SOCKS5ReplyCode(rawValue: 0x02)
    package static let networkUnreachable = SOCKS5ReplyCode(rawValue: 0x03)
    package static let hostUnreachable = SOCKS5ReplyCode(rawValue: 0x04)
    package static let connectionRefused = SOCKS5ReplyCode(rawValue: 0x05)
    package static let ttlExpired = SOCKS5ReplyCode(rawValue: 0x06)
    package static let commandNotSupported = SOCKS5ReplyCode(rawValue: 0x07)
    package static let addressTypeNotSupported = SOCKS5ReplyCode(rawValue: 0x08)

    /// The errno for this reply. A general failure says nothing about its cause, so it is `EIO`
    /// rather than a guess; unassigned codes are treated the same way.
    package var errno: Int32 {
        switch self {
        case .notAllowedByRuleset: return EACCES
        case .networkUnreachable: return ENETUNREACH
        case .hostUnreachable: return EHOSTUNREACH
        case .connectionRefused: return ECONNREFUSED
        case .ttlExpired: return ETIMEDOUT
        case .commandNotSupported: return EOPNOTSUPP
        case .addressTypeNotSupported: return EAFNOSUPPORT
        default: return EIO
        }
    }

    package var description: String {
        switch self {
        case .succeeded: return "succeeded"
        case .generalFailure: return "general SOCKS server failure"
        case .notAllowedByRuleset: return "connection not allowed by ruleset"
        case .networkUnreachable: return "network unreachable"
        case .hostUnreachable: return "host unreachable"
        case .connectionRefused: return "connection refused"
        case .ttlExpired: return "TTL expired"
        case .commandNotSupported: return "command not supported"
        case .addressTypeNotSupported: return "address type not supported"
        default: return "unassigned reply 0x" + String(rawValue, radix: 16)
        }
    }
}
