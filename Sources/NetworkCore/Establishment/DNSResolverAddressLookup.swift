#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkDNS
import NetworkSync

/// The engine's address lookup, through NetworkDNS's resolver: AAAA and A are asked in parallel
/// and each answer goes to the racer as it arrives; `/etc/hosts`, the search list, the shared
/// TTL cache and the getaddrinfo fallback (for nsswitch sources we do not implement) are the
/// resolver's. With `allowStale` (`expiredDNSBehavior = .allow`) an expired cached answer is
/// used at once while a fresh query runs.
package struct DNSResolverAddressLookup: AddressLookup {
    private let allowStale: Bool
    /// Nil: the process-wide resolver as it is when a lookup starts (it follows resolv.conf).
    private let resolver: DNSResolver?

    /// A lookup through `resolver` (the shared one when nil).
    package init(allowStale: Bool = false, resolver: DNSResolver? = nil) {
        self.allowStale = allowStale
        self.resolver = resolver
    }

    package func start(_ host: String, port: Int, sink: AddressLookupSink) -> RunningAddressLookup {
        let remaining = Lock(2)
        let lookup = (resolver ?? .shared).lookUpAddresses(host, allowStale: allowStale) { event in
            switch event {
            case .answer(let answer) where answer.outcome == .nameDoesNotExist:
                // NXDOMAIN is the name's verdict, not the family's: said as Apple's resolver
                // says it, so the racer reports it if no address turns up at all.
                sink.failed(answer.question.type == .aaaa ? .ipv6 : .ipv4, .dns(DNSServiceCode.noSuchName))
            case .answer(let answer):
                let family: AddressFamily = answer.question.type == .aaaa ? .ipv6 : .ipv4
                let addresses = answer.addresses.compactMap { try? $0.socketAddress(port: port) }
                let source: ResolutionSource
                switch answer.source {
                case .cache: source = .cache
                case .staleCache: source = .expiredCache
                default: source = .query
                }
                sink.answered(family, addresses, source: source)
            case .failure(let type, let error):
                sink.failed(type == .aaaa ? .ipv6 : .ipv4, Self.flowError(error))
            }
            if remaining.withLock({ count -> Bool in
                count -= 1
                return count == 0
            }) {
                sink.finished()
            }
        }
        return RunningAddressLookup(cancel: lookup.cancel)
    }

    /// A resolver failure as the DNS-SD code Apple's framework reports.
    static func flowError(_ error: DNSResolverError) -> FlowError {
        switch error {
        case .timedOut: return .dns(DNSServiceCode.timeout)
        case .invalidName: return .dns(DNSServiceCode.badParam)
        case .cancelled: return .posix(ECANCELED)
        case .systemResolverFailure(let code): return systemResolverError(code)
        case .malformedReply: return .dns(DNSServiceCode.invalid)
        case .serverFailure(let code): return serverFailureError(code)
        case .noNameservers, .transportFailure: return .dns(DNSServiceCode.unknown)
        }
    }

    /// The RCODE every server answered with, as the closest DNS-SD code.
    private static func serverFailureError(_ code: DNSResponseCode) -> FlowError {
        switch code {
        case .serverFailure: return .dns(DNSServiceCode.transient)
        case .refused: return .dns(DNSServiceCode.refused)
        case .notImplemented: return .dns(DNSServiceCode.unsupported)
        default: return .dns(DNSServiceCode.unknown)
        }
    }

    /// getaddrinfo's EAI_* codes (from the resolver's nsswitch fallback) as DNS-SD codes. The
    /// resolver already turned "no such name" and "no data" into answers, and EAI_AGAIN into
    /// `timedOut`.
    private static func systemResolverError(_ code: Int32) -> FlowError {
        switch code {
        case EAI_NONAME, EAI_SERVICE: return .dns(DNSServiceCode.noSuchRecord)
        case EAI_AGAIN: return .dns(DNSServiceCode.timeout)
        case EAI_MEMORY: return .dns(DNSServiceCode.noMemory)
        case EAI_SYSTEM: return .posix(errno)
        case EAI_BADFLAGS, EAI_FAMILY, EAI_SOCKTYPE: return .dns(DNSServiceCode.badParam)
        default: return .dns(DNSServiceCode.unknown)
        }
    }
}
