#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkDNS
import NetworkSync

/// Reaching an IPv4 literal from an IPv6-only network (RFC 7050 / RFC 6052): when the kernel has
/// no IPv4 route for it, ask the network's DNS64 for `ipv4only.arpa` AAAA, learn its NAT64
/// prefixes, and race the addresses that embed the literal in them instead.
enum NAT64Synthesis {
    /// Prefixes learnt per resolver configuration (the network); cleared when a discovery finds
    /// none, so a network that gains NAT64 is noticed.
    private static let learnt = Lock<[NAT64Prefix]?>(nil)

    /// Whether `address` is IPv4 and the kernel has no route for it.
    static func needed(for address: SocketAddress, interfaceIndex: Int?) -> Bool {
        address.protocol == .inet && SourceAddressProbe.source(for: address, interfaceIndex: interfaceIndex) == nil
    }

    /// The synthesised IPv6 addresses for `address` (empty when the network has no DNS64), on
    /// `eventLoop`.
    static func synthesize(
        _ address: SocketAddress, resolver: DNSResolver = .shared, on eventLoop: EventLoop
    ) -> EventLoopFuture<[SocketAddress]> {
        let promise = eventLoop.makePromise(of: [SocketAddress].self)
        guard case .v4(let v4) = address, let port = address.port else {
            promise.succeed([])
            return promise.futureResult
        }
        let ipv4 = withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        let host = v4.host
        Task {
            let prefixes: [NAT64Prefix]
            if let known = learnt.withLock({ $0 }), !known.isEmpty {
                prefixes = known
            } else {
                var embedded: [[UInt8]] = []
                if let name = try? DNSName(NAT64Prefix.discoveryName),
                    let answer = try? await resolver.resolve(DNSQuestion(name: name, type: .aaaa))
                {
                    embedded = answer.addresses.compactMap { address -> [UInt8]? in
                        if case .v6(let v6) = address { return v6.octets }
                        return nil
                    }
                }
                prefixes = NAT64Prefix.discover(inAnswers: embedded)
                learnt.withLock { $0 = prefixes }
            }
            let synthesized = prefixes.compactMap { prefix -> SocketAddress? in
                guard let bytes = prefix.synthesize(ipv4) else { return nil }
                var sin6 = sockaddr_in6()
                sin6.sin6_family = sa_family_t(AF_INET6)
                sin6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
                withUnsafeMutableBytes(of: &sin6.sin6_addr) { $0.copyBytes(from: bytes) }
                return SocketAddress(sin6, host: host)
            }
            promise.succeed(synthesized)
        }
        return promise.futureResult
    }
}
