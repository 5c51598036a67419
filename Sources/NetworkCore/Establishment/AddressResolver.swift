#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix
import NetworkSystem

/// Turns host names into socket addresses through the system's `getaddrinfo`, on NIO's blocking
/// thread pool, and parses address literals. The full resolver (NetworkDNS) replaces the lookup
/// through `FlowConfiguration.addressLookup`.
package enum AddressResolver {
    /// getaddrinfo as an `AddressLookup`, on NIO's blocking thread pool. It answers both families
    /// at once; the A answer goes first and the AAAA answer right behind it, so the racer sees
    /// both before its resolution delay could matter and picks the first family by RFC 6724.
    package static func systemLookup(version: IPSocketSettings.Version, transport: FlowTransportKind) -> AddressLookup {
        { host, port, sink in
            NIOThreadPool.singleton.submit { state in
                guard case .active = state else {
                    sink.failed(.posix(ECANCELED))
                    return
                }
                do {
                    let addresses = try lookup(host: host, port: port, version: version, transport: transport)
                    sink.answered(.ipv4, addresses.filter { $0.protocol != .inet6 })
                    sink.answered(.ipv6, addresses.filter { $0.protocol == .inet6 })
                    sink.finished()
                } catch {
                    sink.failed(FlowError(error))
                }
            }
        }
    }

    /// All addresses of `target` at once (IPv6 first), for callers that need an address rather
    /// than a race: a SOCKS5 proxy that is handed an address instead of the name.
    package static func resolve(
        _ target: FlowTarget, version: IPSocketSettings.Version, transport: FlowTransportKind, on eventLoop: EventLoop,
        lookup: AddressLookup? = nil
    ) -> EventLoopFuture<[SocketAddress]> {
        switch target {
        case .address(let address):
            return eventLoop.makeSucceededFuture([address])
        case .unix(let path):
            return eventLoop.makeCompletedFuture { [try SocketAddress(unixDomainSocketPath: path)] }
        case .hostPort(let host, let port, let interfaceName):
            if let literal = literalAddress(host, port: port, interfaceName: interfaceName) {
                return eventLoop.makeSucceededFuture([literal])
            }
            let promise = eventLoop.makePromise(of: [SocketAddress].self)
            let found = NIOLoopBoundBox<[AddressFamily: [SocketAddress]]>([:], eventLoop: eventLoop)
            let lookup = lookup ?? systemLookup(version: version, transport: transport)
            lookup(host, port, ResolutionSink { event in
                eventLoop.execute {
                    switch event {
                    case .answer(let family, let addresses):
                        found.value[family, default: []] += addresses
                    case .familyFailed:
                        break
                    case .finished:
                        let all = (found.value[.ipv6] ?? []) + (found.value[.ipv4] ?? [])
                        if all.isEmpty {
                            promise.fail(FlowError.dns(DNSServiceCode.noSuchRecord))
                        } else {
                            promise.succeed(all)
                        }
                    case .failed(let error):
                        promise.fail(error)
                    }
                }
            })
            return promise.futureResult
        }
    }

    /// Parses an IPv4 or IPv6 literal (with an optional scope for link-local IPv6).
    package static func literalAddress(_ host: String, port: Int, interfaceName: String? = nil) -> SocketAddress? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
            sin.sin_addr = v4
            return SocketAddress(sin, host: host)
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
            sin6.sin6_addr = v6
            if let interfaceName {
                sin6.sin6_scope_id = UInt32(if_nametoindex(interfaceName))
            }
            return SocketAddress(sin6, host: host)
        }
        return nil
    }

    private static func lookup(
        host: String, port: Int, version: IPSocketSettings.Version, transport: FlowTransportKind
    ) throws -> [SocketAddress] {
        var hints = addrinfo()
        switch version {
        case .any: hints.ai_family = AF_UNSPEC
        case .v4: hints.ai_family = AF_INET
        case .v6: hints.ai_family = AF_INET6
        }
        hints.ai_socktype = Int32(transport == .tcp ? SOCK_STREAM.rawValue : SOCK_DGRAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &result)
        guard rc == 0, let first = result else {
            throw dnsError(rc)
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            if let sa = info.pointee.ai_addr {
                switch Int32(sa.pointee.sa_family) {
                case AF_INET:
                    let sin = UnsafeRawPointer(sa).loadUnaligned(as: sockaddr_in.self)
                    addresses.append(SocketAddress(sin, host: host))
                case AF_INET6:
                    let sin6 = UnsafeRawPointer(sa).loadUnaligned(as: sockaddr_in6.self)
                    addresses.append(SocketAddress(sin6, host: host))
                default:
                    break
                }
            }
            cursor = info.pointee.ai_next
        }
        if addresses.isEmpty { throw FlowError.dns(DNSServiceCode.noSuchRecord) }
        return addresses
    }

    // GNU extensions that Glibc's Swift import leaves out (values from <netdb.h>).
    private static let eaiNoData: Int32 = -5
    private static let eaiAddressFamily: Int32 = -9

    /// getaddrinfo's EAI_* codes as the DNS-SD codes Apple's framework reports.
    package static func dnsError(_ code: Int32) -> FlowError {
        switch code {
        case EAI_NONAME, eaiNoData, eaiAddressFamily, EAI_SERVICE:
            return .dns(DNSServiceCode.noSuchRecord)
        case EAI_AGAIN:
            return .dns(DNSServiceCode.timeout)
        case EAI_MEMORY:
            return .dns(DNSServiceCode.noMemory)
        case EAI_SYSTEM:
            return .posix(errno)
        case EAI_BADFLAGS, EAI_FAMILY, EAI_SOCKTYPE:
            return .dns(DNSServiceCode.badParam)
        default:
            return .dns(DNSServiceCode.unknown)
        }
    }
}
