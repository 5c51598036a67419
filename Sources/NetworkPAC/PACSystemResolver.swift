#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import NetworkDNS
import NetworkSync

/// The default host services of PAC scripts: name lookups through NetworkDNS's resolver, and the
/// route's source addresses.
///
/// Lookups go through `DNSResolver.shared`, as the connections' own do (hosts file, cache, the
/// nameservers of resolv.conf, getaddrinfo where nsswitch.conf asks for modules it lacks), so a
/// script sees the names its connections will reach. A PAC script blocks on every lookup it
/// makes, so it waits for one only `timeout` seconds; a lookup still running then is cancelled.
/// That keeps a dead DNS server from using up the script's whole time limit.
package enum PACSystemResolver {
    /// How long a script waits for one name lookup.
    package static let timeout: Double = 2

    /// The addresses of `host` from `resolver`, IPv6 and IPv4 interleaved (IPv6 first, each
    /// family in the order the answer gave), without duplicates; empty on failure or after
    /// `waitingAtMost` seconds (`timeout` unless a test needs room on a busy machine).
    /// Blocks the calling thread, so never call it on Swift's cooperative pool: the lookup runs
    /// there and could find no thread free (the evaluator's own thread is fine).
    package static func resolve(
        _ host: String, using resolver: DNSResolver = .shared, waitingAtMost limit: Double = timeout
    ) -> [String] {
        let answer = Lock<[String]?>(nil)
        let done = DispatchSemaphore(value: 0)
        let lookup = Task {
            let addresses = await resolver.lookUpAddresses(host).addresses.map(\.description)
            var unique: [String] = []
            for address in addresses where !unique.contains(address) { unique.append(address) }
            answer.withLock { [unique] in $0 = unique }
            done.signal()
        }
        guard done.wait(timeout: .now() + limit) == .success else {
            lookup.cancel()
            return []
        }
        return answer.withLock { $0 } ?? []
    }

    /// This machine's addresses as a PAC script should see them: the source address the kernel
    /// would pick for an IPv4 and for an IPv6 destination on the internet (found by connecting
    /// a UDP socket, which sends nothing), falling back to `127.0.0.1` when there is no route.
    /// The interface that carries the default route is what `myIpAddress` means in practice;
    /// looking up the host name, as older implementations do, often yields 127.0.1.1.
    package static func localAddresses() -> [String] {
        var result: [String] = []
        // Documentation prefixes (RFC 5737, RFC 3849): routed like any internet address, owned
        // by nobody, and nothing is sent to them anyway.
        if let v4 = sourceAddress(toward: "198.51.100.1", family: AF_INET) { result.append(v4) }
        if let v6 = sourceAddress(toward: "2001:db8::1", family: AF_INET6) { result.append(v6) }
        return result.isEmpty ? ["127.0.0.1"] : result
    }

    /// The local address the kernel would use toward `destination`, or nil without a route.
    private static func sourceAddress(toward destination: String, family: Int32) -> String? {
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var storage = sockaddr_storage()
        let length: socklen_t
        if family == AF_INET {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = UInt16(53).bigEndian
            guard inet_pton(AF_INET, destination, &sin.sin_addr) == 1 else { return nil }
            withUnsafeBytes(of: sin) { bytes in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = UInt16(53).bigEndian
            guard inet_pton(AF_INET6, destination, &sin6.sin6_addr) == 1 else { return nil }
            withUnsafeBytes(of: sin6) { bytes in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
        let connected = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard connected == 0 else { return nil }
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) }
        }
        guard named == 0 else { return nil }
        return withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { numericHost($0, length: localLength) }
        }
    }

    /// A socket address as numeric text (with a zone for link-local IPv6).
    private static func numericHost(_ address: UnsafePointer<sockaddr>, length: socklen_t) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return nil
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
