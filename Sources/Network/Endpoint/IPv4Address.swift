import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 address, optionally scoped to an interface.
///
/// Equality and hashing take the scope interface into account: `127.0.0.1` and `127.0.0.1%lo`
/// are different values.
public struct IPv4Address: IPAddress, CustomDebugStringConvertible, Equatable, Hashable, Sendable {

    /// The address as a 32-bit number (`127.0.0.1` is `0x7F00_0001`).
    private let value: UInt32

    /// The interface the address is scoped to, if any.
    public let interface: NWInterface?

    /// `0.0.0.0`, the unspecified address.
    public static let any = IPv4Address(value: 0x0000_0000)
    /// `255.255.255.255`, the limited broadcast address.
    public static let broadcast = IPv4Address(value: 0xFFFF_FFFF)
    /// `127.0.0.1`.
    public static let loopback = IPv4Address(value: 0x7F00_0001)
    /// `224.0.0.1`, the group every multicast-capable host joins.
    public static let allHostsGroup = IPv4Address(value: 0xE000_0001)
    /// `224.0.0.2`, the group every multicast router joins.
    public static let allRoutersGroup = IPv4Address(value: 0xE000_0002)
    /// `224.0.0.22`, where IGMPv3 membership reports are sent.
    public static let allReportsGroup = IPv4Address(value: 0xE000_0016)
    /// `224.0.0.251`, the multicast DNS group.
    public static let mdnsGroup = IPv4Address(value: 0xE000_00FB)

    private init(value: UInt32, interface: NWInterface? = nil) {
        self.value = value
        self.interface = interface
    }

    /// Creates an address from exactly 4 bytes in network order; fails for any other length.
    public init?(_ rawValue: Data, _ interface: NWInterface? = nil) {
        guard rawValue.count == 4 else { return nil }
        self.init(value: rawValue.reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }, interface: interface)
    }

    /// Parses a dotted-quad literal such as `192.0.2.1`, optionally followed by `%ifname`.
    ///
    /// Parsing is strict (`inet_pton`): host names, shortened forms like `10.1`, octets above 255
    /// and leading zeros are rejected, as is a scope naming an interface that does not exist.
    public init?(_ string: String) {
        guard let (text, interface) = splitScopedAddress(string) else { return nil }
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        self.init(value: UInt32(bigEndian: address.s_addr), interface: interface)
    }

    /// The 4 address bytes in network order.
    public var rawValue: Data { Data(rawBytes) }

    /// The 4 address bytes in network order, as an array (for building socket addresses).
    package var rawBytes: [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    /// The same address with a different scope interface.
    package func withInterface(_ interface: NWInterface?) -> IPv4Address {
        IPv4Address(value: value, interface: interface)
    }

    /// Whether the address is in `127.0.0.0/8`.
    ///
    /// The whole block counts, not only `127.0.0.1`. This deliberately differs from the 2018
    /// Swift overlay (which tested for `127.0.0.1` alone) because every address in the block is
    /// a loopback address on Linux and that is what callers expect.
    public var isLoopback: Bool { value >> 24 == 127 }

    /// Whether the address is in `169.254.0.0/16`.
    public var isLinkLocal: Bool { value >> 16 == 0xA9FE }

    /// Whether the address is in `224.0.0.0/4`.
    public var isMulticast: Bool { value >> 28 == 0xE }

    /// The dotted-quad form, followed by `%ifname` when the address is scoped.
    public var debugDescription: String {
        let bytes = rawBytes
        return appendingScope("\(bytes[0]).\(bytes[1]).\(bytes[2]).\(bytes[3])", interface)
    }
}
