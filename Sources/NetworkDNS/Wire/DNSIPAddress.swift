import NIOCore

/// An address from an A or AAAA record, a hosts file or getaddrinfo: what the connection racer
/// turns into socket addresses.
package enum DNSIPAddress: Hashable, Sendable, CustomStringConvertible {
    /// From an A record (or an IPv4 hosts entry).
    case v4(DNSIPv4Address)
    /// From an AAAA record (or an IPv6 hosts entry).
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

    /// The address in its usual text form.
    package var description: String {
        switch self {
        case .v4(let address): address.description
        case .v6(let address): address.description
        }
    }

    /// The name a PTR query for this address asks about: "4.3.2.1.in-addr.arpa" for 1.2.3.4,
    /// nibbles in reverse under "ip6.arpa" for IPv6 (RFC 1035 section 3.5, RFC 3596 section 2.5).
    package var reverseLookupName: DNSName {
        let hex = Array("0123456789abcdef".utf8)
        var labels: [[UInt8]]
        switch self {
        case .v4(let address):
            labels = address.octets.reversed().map { Array(String($0).utf8) }
            labels += [Array("in-addr".utf8), Array("arpa".utf8)]
        case .v6(let address):
            labels = address.octets.reversed().flatMap { [[hex[Int($0 & 0x0F)]], [hex[Int($0 >> 4)]]] }
            labels += [Array("ip6".utf8), Array("arpa".utf8)]
        }
        // At most 34 short labels: always within the name limits.
        return DNSName(validatedLabels: labels)
    }

    /// The NIO socket address for this address and `port`.
    package func socketAddress(port: Int) throws -> SocketAddress {
        try SocketAddress(ipAddress: description, port: port)
    }
}
