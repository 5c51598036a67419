#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv6 address as carried in an AAAA record: sixteen octets in network order. Scope ids
/// are not part of a record, so they are not part of this type.
package struct DNSIPv6Address: Hashable, Sendable, CustomStringConvertible {
    /// The sixteen octets, first octet first (always exactly 16).
    package let octets: [UInt8]

    /// Nil unless exactly sixteen octets are given.
    package init?(octets: [UInt8]) {
        guard octets.count == 16 else { return nil }
        self.octets = octets
    }

    /// Parses RFC 4291 text (inet_pton; no scope id).
    package init?(_ text: String) {
        var storage = in6_addr()
        guard inet_pton(AF_INET6, text, &storage) == 1 else { return nil }
        octets = withUnsafeBytes(of: &storage) { Array($0) }
    }

    /// RFC 5952 text, as inet_ntop writes it.
    package var description: String {
        var storage = in6_addr()
        withUnsafeMutableBytes(of: &storage) { raw in
            for index in 0..<16 { raw[index] = octets[index] }
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &storage, &buffer, socklen_t(buffer.count)) != nil else { return "::" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
