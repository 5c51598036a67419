import NIOCore

extension SocketAddress {
    /// The address as log lines show it: `192.0.2.1:443`, `[2001:db8::1]:443`, or a UNIX path.
    var logText: String {
        switch self {
        case .v4:
            return "\(ipAddress ?? "?"):\(port ?? 0)"
        case .v6:
            return "[\(ipAddress ?? "?")]:\(port ?? 0)"
        case .unixDomainSocket:
            return "unix:\(pathname ?? "?")"
        }
    }
}
