#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Linux values that Glibc's Swift import does not expose (they live in kernel uapi headers that
/// `<netinet/*.h>` does not include, or are kernel-internal limits). Each value is the one of the
/// named kernel header; none of them has changed since it was introduced.
package enum LinuxConstants {
    // <linux/in6.h>: flags for IPV6_ADDR_PREFERENCES (RFC 5014), Linux 2.6.26.
    /// Prefer a temporary (privacy, RFC 8981) source address.
    package static let IPV6_PREFER_SRC_TMP: Int32 = 0x0001
    /// Prefer a public (stable) source address.
    package static let IPV6_PREFER_SRC_PUBLIC: Int32 = 0x0002
    /// The system default (net.ipv6.conf.*.use_tempaddr decides); what getsockopt reports unset.
    package static let IPV6_PREFER_SRC_PUBTMP_DEFAULT: Int32 = 0x0100
    /// Care-of vs home address (Mobile IPv6); getsockopt reports HOME (0x0400) by default.
    package static let IPV6_PREFER_SRC_COA: Int32 = 0x0004
    package static let IPV6_PREFER_SRC_HOME: Int32 = 0x0400
    /// The source-preference bits (TMP | PUBLIC | PUBTMP_DEFAULT) inside an IPV6_ADDR_PREFERENCES value.
    package static let IPV6_PREFER_SRC_MASK: Int32 = 0x0103

    // <asm-generic/socket.h>: SOL_SOCKET option, Linux 3.13.
    /// Caps the socket's pacing rate, in bytes per second (all bits set: no cap).
    package static let SO_MAX_PACING_RATE: Int32 = 47

    // <linux/if_arp.h>: values of /sys/class/net/X/type.
    package static let ARPHRD_ETHER: Int = 1
    package static let ARPHRD_LOOPBACK: Int = 772
    package static let ARPHRD_NONE: Int = 0xFFFE

    // <net/tcp.h> (kernel-internal limits; setsockopt answers EINVAL outside them).
    /// Smallest TCP_MAXSEG the kernel accepts (TCP_MIN_MSS, 88 since Linux 5.x; was 64 before).
    package static let TCP_MIN_MSS: Int32 = 88
    /// Largest TCP_MAXSEG the kernel accepts (MAX_TCP_WINDOW).
    package static let MAX_TCP_WINDOW: Int32 = 32767
    /// Largest TCP_KEEPIDLE / TCP_KEEPINTVL, in seconds (MAX_TCP_KEEPIDLE / MAX_TCP_KEEPINTVL).
    package static let MAX_TCP_KEEPIDLE: Int32 = 32767
    package static let MAX_TCP_KEEPINTVL: Int32 = 32767
    /// Largest TCP_KEEPCNT (MAX_TCP_KEEPCNT).
    package static let MAX_TCP_KEEPCNT: Int32 = 127
    /// Largest TCP_SYNCNT (MAX_TCP_SYNCNT).
    package static let MAX_TCP_SYNCNT: Int32 = 127
    /// Initial SYN retransmission timeout (TCP_TIMEOUT_INIT) and the RTO ceiling (TCP_RTO_MAX), seconds.
    package static let TCP_TIMEOUT_INIT_SECONDS = 1
    package static let TCP_RTO_MAX_SECONDS = 120

    // <linux/pkt_sched.h>: SO_PRIORITY bands (values above 6 need CAP_NET_ADMIN).
    package static let TC_PRIO_BESTEFFORT: Int32 = 0
    package static let TC_PRIO_BULK: Int32 = 2
    package static let TC_PRIO_INTERACTIVE_BULK: Int32 = 4
    package static let TC_PRIO_INTERACTIVE: Int32 = 6

    // <linux/in.h> / <linux/socket.h>, imported by Glibc on current systems but spelled here as
    // `Int32` so callers need no casts.
    package static let IPPROTO_MPTCP: Int32 = 262
    package static let SO_BINDTOIFINDEX: Int32 = 62

    // <linux/in.h> and <linux/in6.h>: whether a socket bound to a port receives multicast of every
    // group any socket of the host joined (the default, 1) or only of its own memberships.
    /// IPv4, Linux 2.6.31.
    package static let IP_MULTICAST_ALL: Int32 = 49
    /// IPv6, Linux 4.20.
    package static let IPV6_MULTICAST_ALL: Int32 = 29
}

/// Levels as `Int32` (Glibc imports `IPPROTO_*` as `Int`).
package enum SocketLevel {
    package static let socket: Int32 = SOL_SOCKET
    package static let ip: Int32 = Int32(IPPROTO_IP)
    package static let ipv6: Int32 = Int32(IPPROTO_IPV6)
    package static let tcp: Int32 = Int32(IPPROTO_TCP)
    package static let udp: Int32 = Int32(IPPROTO_UDP)
}
