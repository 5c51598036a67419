import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An error reported by connections, listeners, browsers and the other objects of the framework.
///
/// There are three cases, one per error domain. The Wi-Fi Aware case Apple added in its 2026 SDK
/// is intentionally absent: the WiFiAware framework does not exist on Linux, so the case could
/// never occur, and code that switches over `NWError` exhaustively without a `default` (as code
/// written against the 2025 SDKs does) would stop compiling if it were there.
public enum NWError: Error, CustomDebugStringConvertible, CustomNSError, Equatable, Sendable {
    /// A POSIX (`errno`) error: most socket, routing and protocol failures.
    case posix(POSIXErrorCode)
    /// A DNS-SD error met while resolving, browsing or advertising (a `kDNSServiceErr_*` code).
    case dns(DNSServiceErrorType)
    /// A TLS error, as a Security-framework status code (usually an `errSSL*` value).
    case tls(OSStatus)

    /// The numeric code inside the error's domain: the `errno` value, the DNS-SD code or the
    /// TLS status.
    public var errorCode: Int {
        switch self {
        case .posix(let code): return Int(code.rawValue)
        case .dns(let code): return Int(code)
        case .tls(let code): return Int(code)
        }
    }

    /// User info for the bridged `NSError`: the ``debugDescription`` under
    /// `NSDebugDescriptionErrorKey`.
    public var errorUserInfo: [String: Any] {
        [NSDebugDescriptionErrorKey: debugDescription]
    }

    /// A readable description of the error.
    ///
    /// - POSIX: `POSIXErrorCode(rawValue: <errno>): <strerror text>`, for example
    ///   `POSIXErrorCode(rawValue: 111): Connection refused` — the same shape Apple's framework
    ///   prints, with Linux's `errno` numbers and messages.
    /// - DNS: `<code>: <name>`, where the name is the `kDNSServiceErr_*` constant's suffix, for
    ///   example `-65554: NoSuchRecord`; unknown codes read `<code>: Unknown DNS-SD error`.
    /// - TLS: `<code>: <constant>`, for example `-9808: errSSLBadCert`; unknown codes read
    ///   `<code>: Unknown TLS error`.
    public var debugDescription: String {
        switch self {
        case .posix(let code):
            return "POSIXErrorCode(rawValue: \(code.rawValue)): \(NWError.message(forErrno: code.rawValue))"
        case .dns(let code):
            return "\(code): \(NWError.dnsServiceErrorNames[code] ?? "Unknown DNS-SD error")"
        case .tls(let code):
            return "\(code): \(NWError.tlsStatusNames[code] ?? "Unknown TLS error")"
        }
    }

    /// The C library's message for an `errno` value, fetched with the thread-safe `strerror_r`.
    private static func message(forErrno value: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard strerror_r(value, &buffer, buffer.count) == 0 else { return "Unknown error \(value)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The `kNWErrorDomain*` constant naming this error's domain.
    package var domainName: String {
        switch self {
        case .posix: return kNWErrorDomainPOSIX
        case .dns: return kNWErrorDomainDNS
        case .tls: return kNWErrorDomainTLS
        }
    }

    /// A POSIX error from a raw `errno` value; values Glibc has no `POSIXErrorCode` case for
    /// become `EIO`.
    package init(errno value: Int32) {
        self = .posix(POSIXErrorCode(rawValue: value) ?? .EIO)
    }

    /// The `kDNSServiceErr_*` codes (from `dns_sd.h`), by value, named without the prefix.
    package static let dnsServiceErrorNames: [DNSServiceErrorType: String] = [
        0: "NoError",
        -65537: "Unknown",
        -65538: "NoSuchName",
        -65539: "NoMemory",
        -65540: "BadParam",
        -65541: "BadReference",
        -65542: "BadState",
        -65543: "BadFlags",
        -65544: "Unsupported",
        -65545: "NotInitialized",
        -65547: "AlreadyRegistered",
        -65548: "NameConflict",
        -65549: "Invalid",
        -65550: "Firewall",
        -65551: "Incompatible",
        -65552: "BadInterfaceIndex",
        -65553: "Refused",
        -65554: "NoSuchRecord",
        -65555: "NoAuth",
        -65556: "NoSuchKey",
        -65557: "NATTraversal",
        -65558: "DoubleNAT",
        -65559: "BadTime",
        -65560: "BadSig",
        -65561: "BadKey",
        -65562: "Transient",
        -65563: "ServiceNotRunning",
        -65564: "NATPortMappingUnsupported",
        -65565: "NATPortMappingDisabled",
        -65566: "NoRouter",
        -65567: "PollingMode",
        -65568: "Timeout",
        -65569: "DefunctConnection",
        -65570: "PolicyDenied",
        -65571: "NotPermitted",
        -65572: "StaleData",
    ]

    /// The Secure Transport `errSSL*` status codes, by value, named by their constant.
    package static let tlsStatusNames: [OSStatus: String] = [
        -9800: "errSSLProtocol",
        -9801: "errSSLNegotiation",
        -9802: "errSSLFatalAlert",
        -9803: "errSSLWouldBlock",
        -9804: "errSSLSessionNotFound",
        -9805: "errSSLClosedGraceful",
        -9806: "errSSLClosedAbort",
        -9807: "errSSLXCertChainInvalid",
        -9808: "errSSLBadCert",
        -9809: "errSSLCrypto",
        -9810: "errSSLInternal",
        -9811: "errSSLModuleAttach",
        -9812: "errSSLUnknownRootCert",
        -9813: "errSSLNoRootCert",
        -9814: "errSSLCertExpired",
        -9815: "errSSLCertNotYetValid",
        -9816: "errSSLClosedNoNotify",
        -9817: "errSSLBufferOverflow",
        -9818: "errSSLBadCipherSuite",
        -9819: "errSSLPeerUnexpectedMsg",
        -9820: "errSSLPeerBadRecordMac",
        -9821: "errSSLPeerDecryptionFail",
        -9822: "errSSLPeerRecordOverflow",
        -9823: "errSSLPeerDecompressFail",
        -9824: "errSSLPeerHandshakeFail",
        -9825: "errSSLPeerBadCert",
        -9826: "errSSLPeerUnsupportedCert",
        -9827: "errSSLPeerCertRevoked",
        -9828: "errSSLPeerCertExpired",
        -9829: "errSSLPeerCertUnknown",
        -9830: "errSSLIllegalParam",
        -9831: "errSSLPeerUnknownCA",
        -9832: "errSSLPeerAccessDenied",
        -9833: "errSSLPeerDecodeError",
        -9834: "errSSLPeerDecryptError",
        -9835: "errSSLPeerExportRestriction",
        -9836: "errSSLPeerProtocolVersion",
        -9837: "errSSLPeerInsufficientSecurity",
        -9838: "errSSLPeerInternalError",
        -9839: "errSSLPeerUserCancelled",
        -9840: "errSSLPeerNoRenegotiation",
        -9841: "errSSLPeerAuthCompleted",
        -9842: "errSSLClientCertRequested",
        -9843: "errSSLHostNameMismatch",
        -9844: "errSSLConnectionRefused",
        -9845: "errSSLDecryptionFail",
        -9846: "errSSLBadRecordMac",
        -9847: "errSSLRecordOverflow",
        -9848: "errSSLBadConfiguration",
        -9849: "errSSLUnexpectedRecord",
        -9850: "errSSLWeakPeerEphemeralDHKey",
        -9851: "errSSLClientHelloReceived",
        -9852: "errSSLTransportReset",
        -9853: "errSSLNetworkTimeout",
        -9854: "errSSLConfigurationFailed",
        -9855: "errSSLUnsupportedExtension",
        -9856: "errSSLUnexpectedMessage",
        -9857: "errSSLDecompressFail",
        -9858: "errSSLHandshakeFail",
        -9859: "errSSLDecodeError",
        -9860: "errSSLInappropriateFallback",
        -9861: "errSSLMissingExtension",
        -9862: "errSSLBadCertificateStatusResponse",
        -9863: "errSSLCertificateRequired",
        -9864: "errSSLUnknownPSKIdentity",
        -9865: "errSSLUnrecognizedName",
    ]
}
