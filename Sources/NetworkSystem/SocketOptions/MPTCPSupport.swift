#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether this kernel gives out Multipath TCP sockets (`IPPROTO_MPTCP`, Linux 5.6 and later,
/// with `net.mptcp.enabled` on). Probed once per process by opening one.
package enum MPTCPSupport {
    /// `IPPROTO_MPTCP`.
    package static let protocolNumber: Int32 = 262
    /// `SOL_MPTCP` and `MPTCP_INFO`: the option answers only on a connection that negotiated
    /// MPTCP (a fallback to plain TCP gets `EOPNOTSUPP`).
    package static let solMPTCP: Int32 = 284
    package static let mptcpInfo: Int32 = 1

    package static let available: Bool = {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), protocolNumber)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }()
}
