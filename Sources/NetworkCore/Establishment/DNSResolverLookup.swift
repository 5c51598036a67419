#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkDNS
import Synchronization

/// The engine's own resolver (NetworkDNS) as an `AddressLookup`: AAAA and A are asked in
/// parallel and each answer goes to the racer as it arrives; `/etc/hosts`, the search list, the
/// shared TTL cache and the getaddrinfo fallback (for nsswitch sources we do not implement) are
/// the resolver's. With `allowStale` (`expiredDNSBehavior = .allow`) an expired cached answer
/// is used at once while a fresh query runs.
enum DNSResolverLookup {
    /// Where each answer came from, for the establishment report.
    enum Source: Sendable {
        case query, cache, expiredCache
    }

    static func make(allowStale: Bool, resolver: DNSResolver = .shared, sources: (@Sendable (Source) -> Void)? = nil) -> AddressLookup {
        { host, port, sink in
            let remaining = Mutex(2)
            resolver.resolveAddresses(host, allowStale: allowStale) { event in
                switch event {
                case .answer(let answer):
                    let family: AddressFamily = answer.question.type == .aaaa ? .ipv6 : .ipv4
                    let addresses = answer.addresses.compactMap { try? $0.socketAddress(port: port) }
                    switch answer.source {
                    case .cache: sources?(.cache)
                    case .staleCache: sources?(.expiredCache)
                    default: sources?(.query)
                    }
                    sink.answered(family, addresses)
                case .failure(let type, let error):
                    sink.failed(type == .aaaa ? .ipv6 : .ipv4, flowError(error))
                }
                if remaining.withLock({ count -> Bool in
                    count -= 1
                    return count == 0
                }) {
                    sink.finished()
                }
            }
        }
    }

    /// A resolver failure as the DNS-SD code Apple's framework reports.
    static func flowError(_ error: DNSResolverError) -> FlowError {
        switch error {
        case .timedOut: return .dns(DNSServiceCode.timeout)
        case .invalidName: return .dns(DNSServiceCode.badParam)
        case .cancelled: return .posix(ECANCELED)
        case .systemResolverFailure(let code): return AddressResolver.dnsError(code)
        case .noNameservers, .serverFailure, .transportFailure: return .dns(DNSServiceCode.unknown)
        }
    }
}
