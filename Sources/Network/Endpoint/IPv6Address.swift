import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv6 address, optionally scoped to an interface (as link-local addresses usually are).
///
/// Equality and hashing take the scope interface into account: `fe80::1%lo` and `fe80::1` are
/// different values.
public struct IPv6Address: IPAddress, CustomDebugStringConvertible, Equatable, Hashable, Sendable {

    /// The multicast scopes, as encoded in the low four bits of a multicast address's second byte.
    public enum Scope: UInt8, Sendable {
        /// Interface-local (node-local) scope.
        case nodeLocal = 1
        /// Link-local scope.
        case linkLocal = 2
        /// Site-local scope.
        case siteLocal = 5
        /// Organization-local scope.
        case organizationLocal = 8
        /// Global scope.
        case global = 0x0e
    }

    /// The first 8 address bytes as a big-endian number.
    private let high: UInt64
    /// The last 8 address bytes as a big-endian number.
    private let low: UInt64

    /// The interface the address is scoped to, if any.
    public let interface: NWInterface?

    /// `::`, the unspecified address.
    public static let any = IPv6Address(high: 0, low: 0)
    /// The same value as ``any``: IPv6 has no broadcast address. Kept for source compatibility.
    public static let broadcast = IPv6Address(high: 0, low: 0)
    /// `::1`.
    public static let loopback = IPv6Address(high: 0, low: 1)
    /// `ff01::1`, all nodes on this node (interface-local scope).
    public static let nodeLocalNodes = IPv6Address(high: 0xFF01 << 48, low: 1)
    /// `ff02::1`, all nodes on the link.
    public static let linkLocalNodes = IPv6Address(high: 0xFF02 << 48, low: 1)
    /// `ff02::2`, all routers on the link.
    public static let linkLocalRouters = IPv6Address(high: 0xFF02 << 48, low: 2)

    private init(high: UInt64, low: UInt64, interface: NWInterface? = nil) {
        self.high = high
        self.low = low
        self.interface = interface
    }

    /// Creates an address from exactly 16 bytes in network order; fails for any other length.
    public init?(_ rawValue: Data, _ interface: NWInterface? = nil) {
        guard rawValue.count == 16 else { return nil }
        self.init(bytes: Array(rawValue), interface: interface)
    }

    private init(bytes: [UInt8], interface: NWInterface?) {
        let high = bytes[0..<8].reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
        let low = bytes[8..<16].reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
        self.init(high: high, low: low, interface: interface)
    }

    /// Parses an IPv6 literal in any of its textual forms (full, `::`-compressed, with an
    /// embedded dotted quad), optionally followed by `%ifname`.
    ///
    /// Parsing is strict (`inet_pton`): host names, brackets, and groups wider than 16 bits are
    /// rejected, as is a scope naming an interface that does not exist.
    public init?(_ string: String) {
        guard let (text, interface) = splitScopedAddress(string) else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        self.init(bytes: bytes, interface: interface)
    }

    /// The 16 address bytes in network order.
    public var rawValue: Data { Data(rawBytes) }

    /// The 16 address bytes in network order, as an array (for building socket addresses).
    package var rawBytes: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: high >> UInt64(56 - 8 * i))
            bytes[8 + i] = UInt8(truncatingIfNeeded: low >> UInt64(56 - 8 * i))
        }
        return bytes
    }

    /// The same address with a different scope interface.
    package func withInterface(_ interface: NWInterface?) -> IPv6Address {
        IPv6Address(high: high, low: low, interface: interface)
    }

    /// Whether this is `::`.
    public var isAny: Bool { high == 0 && low == 0 }

    /// Whether this is `::1`.
    public var isLoopback: Bool { high == 0 && low == 1 }

    /// Whether this is a (deprecated) IPv4-compatible address: `::a.b.c.d`, excluding `::` and
    /// `::1`. (The misspelling is part of the framework's API.)
    public var isIPv4Compatabile: Bool { high == 0 && low >> 32 == 0 && low > 1 }

    /// Whether this is an IPv4-mapped address, `::ffff:a.b.c.d`.
    public var isIPv4Mapped: Bool { high == 0 && low >> 32 == 0xFFFF }

    /// Whether this is a 6to4 address (`2002::/16`).
    public var is6to4: Bool { high >> 48 == 0x2002 }

    /// Whether this is a link-local unicast address (`fe80::/10`).
    public var isLinkLocal: Bool { high >> 54 == 0xFE80 >> 6 }

    /// Whether this is a multicast address (`ff00::/8`).
    public var isMulticast: Bool { high >> 56 == 0xFF }

    /// Whether this is a unique local address (`fc00::/7`).
    public var isUniqueLocal: Bool { high >> 57 == 0xFC >> 1 }

    /// The scope of a multicast address; nil for unicast addresses and for scope values that
    /// have no ``Scope`` case.
    public var multicastScope: IPv6Address.Scope? {
        guard isMulticast else { return nil }
        return Scope(rawValue: UInt8(truncatingIfNeeded: high >> 48) & 0x0F)
    }

    /// The embedded IPv4 address of an IPv4-mapped or IPv4-compatible address (keeping the
    /// scope interface); nil for every other address.
    public var asIPv4: IPv4Address? {
        guard isIPv4Mapped || isIPv4Compatabile else { return nil }
        return IPv4Address(Data(rawBytes[12..<16]), interface)
    }

    /// The canonical text form (RFC 5952 style, as `inet_ntop` writes it), followed by `%ifname`
    /// when the address is scoped.
    public var debugDescription: String {
        var address = in6_addr()
        let bytes = rawBytes
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else {
            return appendingScope(bytes.map { String($0, radix: 16) }.joined(separator: ":"), interface)
        }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return appendingScope(text, interface)
    }
}
