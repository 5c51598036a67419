#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A non-blocking rtnetlink socket subscribed to what changes a path: links, IPv4 and IPv6
/// addresses and routes. Each datagram that arrives on it says "something changed"; readers
/// re-read the tables rather than decode the messages (changes come in bursts, and the tables
/// are the truth).
package enum RouteChangeSocket {
    /// `RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE`.
    package static let groups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400

    /// Opens and binds the socket in the calling thread's network namespace; the caller owns
    /// the descriptor.
    package static func open() throws(SystemError) -> Int32 {
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)  // NETLINK_ROUTE
        guard fd >= 0 else { throw .last("socket(AF_NETLINK)") }
        var address = NetlinkAddress(groups: groups)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<NetlinkAddress>.size))
            }
        }
        guard bound == 0 else {
            let error = SystemError.last("bind(AF_NETLINK)")
            close(fd)
            throw error
        }
        // A burst must not be lost to a small buffer (ENOBUFS only means "re-read", which the
        // readers do anyway, but a bigger buffer keeps it rare).
        var size: Int32 = 1 << 20
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }
}

/// `struct sockaddr_nl` from <linux/netlink.h> (Glibc's module does not export it).
private struct NetlinkAddress {
    var family = sa_family_t(AF_NETLINK)
    var pad: UInt16 = 0
    /// 0: the kernel assigns the port id.
    var pid: UInt32 = 0
    var groups: UInt32

    init(groups: UInt32) { self.groups = groups }
}
