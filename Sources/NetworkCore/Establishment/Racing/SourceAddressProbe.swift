#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// The I/O half of address sorting: asks the kernel which source address it would use for each
/// destination, as glibc does to sort its answers, by connecting a UDP socket (which sends
/// nothing, it only looks the route up) and reading its local address. No route means no source, which
/// RFC 6724 rule 1 sorts last.
enum SourceAddressProbe {
    /// `addresses` as race candidates with their RFC 6724 keys. Even a lone address is probed:
    /// the other family's answer may come separately, and the keys decide which family leads.
    static func candidates(for addresses: [SocketAddress], interfaceIndex: Int?) -> [RaceCandidate] {
        guard !addresses.isEmpty else { return [] }
        let prefixes = localPrefixLengths()
        return addresses.map { address in
            guard let destination = sixteenBytes(address) else {
                return RaceCandidate(address: address, rank: .neutral)
            }
            let source = source(for: address, interfaceIndex: interfaceIndex).flatMap { local -> AddressSorting.Source? in
                guard let bytes = sixteenBytes(local) else { return nil }
                return AddressSorting.Source(address: bytes, prefixLength: prefixes[bytes])
            }
            return RaceCandidate(address: address, rank: AddressSorting.key(destination: destination, source: source))
        }
    }

    /// The local address a datagram to `destination` would leave from, or nil without a route.
    static func source(for destination: SocketAddress, interfaceIndex: Int?) -> SocketAddress? {
        let family: Int32
        switch destination.protocol {
        case .inet: family = AF_INET
        case .inet6: family = AF_INET6
        default: return nil
        }
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if var index = interfaceIndex.map(Int32.init) {
            // The race's sockets are bound to this interface: ask for the route they will get.
            _ = setsockopt(fd, SOL_SOCKET, InterfaceSelection.soBindToIfindex, &index, socklen_t(MemoryLayout<Int32>.size))
        }
        // A broadcast destination (255.255.255.255, a subnet's) routes like any other, but the
        // kernel refuses to connect to one (EACCES) unless the socket allows broadcast.
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &on, socklen_t(MemoryLayout<Int32>.size))
        var target = destination
        if target.port == 0 || target.port == nil {
            // Port 0 is not a destination the kernel routes to; any other port gives the same route.
            target.port = 9
        }
        let connected = target.withSockAddr { pointer, length in
            connect(fd, pointer, socklen_t(length)) == 0
        }
        guard connected else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard named else { return nil }
        return SocketAddress(storage: storage)
    }

    /// IPv4 as IPv4-mapped IPv6, IPv6 as is, nil for anything else.
    static func sixteenBytes(_ address: SocketAddress) -> [UInt8]? {
        guard let bytes = LocalNetworkCheck.rawBytes(address) else { return nil }
        return bytes.count == 4 ? AddressSorting.mapped(ipv4: bytes) : bytes
    }

    /// Prefix length of every address this host has (16-byte form), for rule 9.
    private static func localPrefixLengths() -> [[UInt8]: Int] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return [:] }
        defer { freeifaddrs(head) }
        var lengths: [[UInt8]: Int] = [:]
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            cursor = entry.pointee.ifa_next
            guard let address = entry.pointee.ifa_addr, let mask = entry.pointee.ifa_netmask else { continue }
            let bytes: [UInt8]
            let maskBytes: [UInt8]
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                let sin = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self)
                let maskIn = UnsafeRawPointer(mask).loadUnaligned(as: sockaddr_in.self)
                bytes = AddressSorting.mapped(ipv4: withUnsafeBytes(of: sin.sin_addr) { Array($0) })
                maskBytes = withUnsafeBytes(of: maskIn.sin_addr) { Array($0) }
            case AF_INET6:
                let sin6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self)
                let mask6 = UnsafeRawPointer(mask).loadUnaligned(as: sockaddr_in6.self)
                bytes = withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }
                maskBytes = withUnsafeBytes(of: mask6.sin6_addr) { Array($0) }
            default:
                continue
            }
            lengths[bytes] = maskBytes.reduce(0) { $0 + $1.nonzeroBitCount }
        }
        return lengths
    }
}
