import NetworkDNS

/// One way to reach a destination, as a PAC script's `FindProxyForURL` answer names it.
///
/// A script answers with a list (`"PROXY a:1; SOCKS5 b:2; DIRECT"`); the establishment tries the
/// choices in that order, so the order of `[PACProxyChoice]` is significant. The keyword mapping
/// is in `PACProxyChoice.parse(_:)` and docs/pac.md.
package enum PACProxyChoice: Hashable, Sendable, CustomStringConvertible {
    /// Connect to the destination without a proxy.
    case direct
    /// An HTTP proxy reached in clear text, used with `CONNECT` (keywords `PROXY`, `HTTP`).
    case httpConnect(host: String, port: Int)
    /// An HTTP proxy reached over TLS, used with `CONNECT` (keyword `HTTPS`).
    case httpsConnect(host: String, port: Int)
    /// A SOCKS version 5 proxy (keywords `SOCKS5` and plain `SOCKS`).
    case socks5(host: String, port: Int)
    /// A SOCKS version 4 proxy (keyword `SOCKS4`); kept distinct so the establishment can decide
    /// whether it can speak it.
    case socks4(host: String, port: Int)

    /// The entry written back in PAC syntax, for logs and establishment reports.
    package var description: String {
        switch self {
        case .direct: return "DIRECT"
        case .httpConnect(let host, let port): return "PROXY \(Self.hostPort(host, port))"
        case .httpsConnect(let host, let port): return "HTTPS \(Self.hostPort(host, port))"
        case .socks5(let host, let port): return "SOCKS5 \(Self.hostPort(host, port))"
        case .socks4(let host, let port): return "SOCKS4 \(Self.hostPort(host, port))"
        }
    }

    // IPv6 literals need brackets, or the port would read as one more address group.
    private static func hostPort(_ host: String, _ port: Int) -> String {
        HostAuthority.authority(host, port: port)
    }
}
