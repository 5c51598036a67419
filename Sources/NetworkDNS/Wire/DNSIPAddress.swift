import NIOCore

/// An address from an A or AAAA record, a hosts file or getaddrinfo: what the connection racer
/// turns into socket addresses.
package enum DNSIPAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(DNSIPv4Address)
    case v6(DNSIPv6Address)

    /// Parses either family's text form.
    package init?(_ text: String) {
        if let v4 = DNSIPv4Address(text) {
            self = .v4(v4)
        } else if let v6 = DNSIPv6Address(text) {
            self = .v6(v6)
        } else {
            return nil
        }
    }

    package var description: String {
        switch self {
        case .v4(let address): address.description
        case .v6(let address): address.description
        }
    }

    /// The NIO socket address for this address and `port`.
    package func socketAddress(port: Int) throws -> SocketAddress {
        try SocketAddress(ipAddress: description, port: port)
    }
}
