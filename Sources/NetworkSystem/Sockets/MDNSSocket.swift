#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The UDP socket an mDNS stack uses on one interface for one address family (RFC 6762): bound
/// to port 5353 on the wildcard address, restricted to the interface (`SO_BINDTOIFINDEX`, so
/// what it reads arrived there and what it multicasts leaves there), a member of 224.0.0.251 or
/// ff02::fb on that interface and of no group joined elsewhere (`IP_MULTICAST_ALL` off), with
/// TTL / hop limit 255 on everything it sends (§11: receivers check it) and its own multicasts
/// looped back, so other sockets of this host (another process, avahi) hear them.
///
/// `SO_REUSEADDR` and `SO_REUSEPORT` let other mDNS stacks of the host bind the port too.
/// Unicast to port 5353 is then shared with them; multicast reaches every one.
package enum MDNSSocket {
    package static let port: UInt16 = 5353
    /// 224.0.0.251, network order.
    package static let groupIPv4: [UInt8] = [224, 0, 0, 251]
    /// ff02::fb.
    package static let groupIPv6: [UInt8] = [0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xfb]

    /// A new non-blocking socket for `family` on interface `index`, ready to be read; the caller
    /// owns the descriptor. `source` (IPv4: the interface's address, 4 bytes) is what its
    /// multicasts come from: left to itself the kernel picks only addresses of link scope or
    /// wider for them, and would send a loopback interface's from 0.0.0.0.
    package static func open(family: SocketFamily, interfaceIndex index: Int, source: [UInt8] = []) throws(SystemError) -> Int32 {
        let domain = family == .inet ? AF_INET : AF_INET6
        let fd = socket(domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .last("socket(\(domain), SOCK_DGRAM)") }
        do throws(SystemError) {
            try SocketOptions.set(fd: fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            try SocketOptions.set(fd: fd, level: SOL_SOCKET, name: SO_REUSEPORT, value: 1)
            try SocketOptions.bind(fd: fd, toInterfaceIndex: index)
            if family == .inet {
                try configureIPv4(fd: fd, interfaceIndex: index, source: source)
            } else {
                try configureIPv6(fd: fd, interfaceIndex: index)
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    private static func configureIPv4(fd: Int32, interfaceIndex index: Int, source: [UInt8]) throws(SystemError) {
        let ip = Int32(IPPROTO_IP)
        try SocketOptions.set(fd: fd, level: ip, name: LinuxConstants.IP_MULTICAST_ALL, value: 0)
        try SocketOptions.set(fd: fd, level: ip, name: IP_MULTICAST_TTL, value: 255)
        try SocketOptions.set(fd: fd, level: ip, name: IP_TTL, value: 255)
        try SocketOptions.set(fd: fd, level: ip, name: IP_MULTICAST_LOOP, value: 1)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        try bind(fd: fd, &address)
        var request = ip_mreqn()
        request.imr_multiaddr.s_addr = groupIPv4.withUnsafeBytes { $0.load(as: UInt32.self) }
        request.imr_ifindex = Int32(index)
        try set(fd: fd, level: ip, name: IP_ADD_MEMBERSHIP, &request, "IP_ADD_MEMBERSHIP")
        if source.count == 4 { request.imr_address.s_addr = source.withUnsafeBytes { $0.load(as: UInt32.self) } }
        try set(fd: fd, level: ip, name: IP_MULTICAST_IF, &request, "IP_MULTICAST_IF")
    }

    private static func configureIPv6(fd: Int32, interfaceIndex index: Int) throws(SystemError) {
        let ipv6 = Int32(IPPROTO_IPV6)
        try SocketOptions.set(fd: fd, level: ipv6, name: IPV6_V6ONLY, value: 1)
        try SocketOptions.set(fd: fd, level: ipv6, name: LinuxConstants.IPV6_MULTICAST_ALL, value: 0)
        try SocketOptions.set(fd: fd, level: ipv6, name: IPV6_MULTICAST_HOPS, value: 255)
        try SocketOptions.set(fd: fd, level: ipv6, name: IPV6_UNICAST_HOPS, value: 255)
        try SocketOptions.set(fd: fd, level: ipv6, name: IPV6_MULTICAST_LOOP, value: 1)
        try SocketOptions.set(fd: fd, level: ipv6, name: IPV6_MULTICAST_IF, value: Int32(index))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        try bind(fd: fd, &address)
        var request = ipv6_mreq()
        withUnsafeMutableBytes(of: &request.ipv6mr_multiaddr) { raw in
            for (offset, byte) in groupIPv6.enumerated() { raw[offset] = byte }
        }
        request.ipv6mr_interface = UInt32(index)
        try set(fd: fd, level: ipv6, name: IPV6_ADD_MEMBERSHIP, &request, "IPV6_ADD_MEMBERSHIP")
    }

    private static func bind<Address>(fd: Int32, _ address: inout Address) throws(SystemError) {
        let rc = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
        guard rc == 0 else { throw .last("bind(port \(port))") }
    }

    private static func set<Value>(fd: Int32, level: Int32, name: Int32, _ value: inout Value, _ label: String) throws(SystemError) {
        let rc = withUnsafeBytes(of: &value) { setsockopt(fd, level, name, $0.baseAddress, socklen_t($0.count)) }
        guard rc == 0 else {
            throw .last("setsockopt(\(label))")
        }
    }
}
