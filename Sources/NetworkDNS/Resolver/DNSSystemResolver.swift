import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// getaddrinfo on NIO's thread pool, one address family per call: the fallback when
/// nsswitch.conf sends host lookups through NSS modules this package does not implement
/// (systemd-resolved, myhostname, LDAP, …), as Go's resolver does.
enum DNSSystemResolver {
    /// glibc's EAI_NODATA and EAI_ADDRFAMILY: only visible to C under _GNU_SOURCE, so Swift's
    /// Glibc module does not export them.
    static let eaiNoData: Int32 = -5
    static let eaiAddressFamily: Int32 = -9

    static func lookup(host: String, type: DNSRecordType, started: NIODeadline, clock: DNSClock) async throws -> DNSAnswer {
        let family = type == .aaaa ? AF_INET6 : AF_INET
        guard let name = try? DNSName(host) else { throw DNSResolverError.invalidName(host) }
        let question = DNSQuestion(name: name, type: type)
        let result: Result<[DNSIPAddress], DNSResolverError> = try await NIOThreadPool.singleton.runIfActive {
            Self.callGetaddrinfo(host: host, family: family)
        }
        let duration = clock.now() - started
        switch result {
        case .success(let addresses):
            let records = addresses.map { address -> DNSResourceRecord in
                switch address {
                case .v4(let v4): DNSResourceRecord(name: name, type: .a, ttl: 0, data: .a(v4))
                case .v6(let v6): DNSResourceRecord(name: name, type: .aaaa, ttl: 0, data: .aaaa(v6))
                }
            }
            return DNSAnswer(
                question: question, outcome: records.isEmpty ? .noData : .records, records: records, ttl: 0,
                source: .system, duration: duration)
        case .failure(.systemResolverFailure(EAI_NONAME)):
            return DNSAnswer(question: question, outcome: .nameDoesNotExist, records: [], ttl: 0, source: .system, duration: duration)
        case .failure(.systemResolverFailure(Self.eaiNoData)), .failure(.systemResolverFailure(Self.eaiAddressFamily)):
            return DNSAnswer(question: question, outcome: .noData, records: [], ttl: 0, source: .system, duration: duration)
        case .failure(let error):
            throw error
        }
    }

    private static func callGetaddrinfo(host: String, family: Int32) -> Result<[DNSIPAddress], DNSResolverError> {
        var hints = addrinfo()
        hints.ai_family = family
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            return .failure(status == EAI_AGAIN ? .timedOut : .systemResolverFailure(status))
        }
        defer { freeaddrinfo(list) }
        var addresses: [DNSIPAddress] = []
        var cursor = list
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr {
                if entry.pointee.ai_family == AF_INET {
                    let value = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                    addresses.append(.v4(DNSIPv4Address(rawValue: UInt32(bigEndian: value))))
                } else if entry.pointee.ai_family == AF_INET6 {
                    var storage = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    let octets = withUnsafeBytes(of: &storage) { Array($0) }
                    if let v6 = DNSIPv6Address(octets: octets) { addresses.append(.v6(v6)) }
                }
            }
            cursor = entry.pointee.ai_next
        }
        var seen = Set<DNSIPAddress>()
        return .success(addresses.filter { seen.insert($0).inserted })
    }
}
