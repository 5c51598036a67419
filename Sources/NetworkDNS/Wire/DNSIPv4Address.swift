#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 address as carried in an A record: four octets in network order.
package struct DNSIPv4Address: Hashable, Sendable, CustomStringConvertible {
    /// The address in host byte order (first octet in the top byte).
    package var rawValue: UInt32

    /// From a host-order 32-bit value.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// From the four octets, first octet first.
    package init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        rawValue = UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)
    }

    /// Parses dotted-quad text strictly (inet_pton: no shorthand like "127.1").
    package init?(_ text: String) {
        var storage = in_addr()
        guard inet_pton(AF_INET, text, &storage) == 1 else { return nil }
        rawValue = UInt32(bigEndian: storage.s_addr)
    }

    /// The four octets, first octet first.
    package var octets: [UInt8] {
        [UInt8(rawValue >> 24), UInt8((rawValue >> 16) & 0xFF), UInt8((rawValue >> 8) & 0xFF), UInt8(rawValue & 0xFF)]
    }

    /// Dotted-quad text.
    package var description: String { octets.map(String.init).joined(separator: ".") }
}
