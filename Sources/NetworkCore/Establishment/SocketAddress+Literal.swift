#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

extension SocketAddress {
    /// The address `host` spells when it is an IPv4 or IPv6 literal (with an optional scope for
    /// link-local IPv6), with `port`; nil for a name, which needs an `AddressLookup`.
    package init?(literal host: String, port: Int, interfaceName: String? = nil) {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
            sin.sin_addr = v4
            self.init(sin, host: host)
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port)).bigEndian
            sin6.sin6_addr = v6
            if let interfaceName {
                sin6.sin6_scope_id = UInt32(if_nametoindex(interfaceName))
            }
            self.init(sin6, host: host)
            return
        }
        return nil
    }
}

extension SocketAddress {
    /// This address as a dual-stack IPv6 socket writes to it: an IPv4 address as its IPv4-mapped
    /// IPv6 form (`::ffff:a.b.c.d`), with the same port; any other address as it is.
    package var ipv4Mapped: SocketAddress {
        guard case .v4(let v4) = self else { return self }
        var sin6 = sockaddr_in6()
        sin6.sin6_family = sa_family_t(AF_INET6)
        sin6.sin6_port = v4.address.sin_port
        withUnsafeMutableBytes(of: &sin6.sin6_addr) { bytes in
            bytes[10] = 0xff
            bytes[11] = 0xff
            withUnsafeBytes(of: v4.address.sin_addr) { UnsafeMutableRawBufferPointer(rebasing: bytes[12...]).copyMemory(from: $0) }
        }
        return SocketAddress(sin6, host: v4.host)
    }
}
