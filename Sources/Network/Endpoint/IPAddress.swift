import Foundation

/// What IPv4 and IPv6 addresses have in common: raw bytes, an optional scope interface and a few
/// classification properties.
public protocol IPAddress: Sendable {
    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    var rawValue: Data { get }

    /// Creates an address from network-order bytes; fails when the byte count does not fit the
    /// address family.
    init?(_ rawValue: Data, _ interface: NWInterface?)

    /// Parses a numeric address, optionally followed by `%` and an interface name.
    ///
    /// No name resolution takes place. Fails for anything that is not a literal of the address
    /// family, and when a scope names an interface that does not exist.
    init?(_ string: String)

    /// The interface the address is scoped to, if any.
    var interface: NWInterface? { get }

    /// Whether the address is a loopback address.
    var isLoopback: Bool { get }

    /// Whether the address is link-local.
    var isLinkLocal: Bool { get }

    /// Whether the address is a multicast group address.
    var isMulticast: Bool { get }
}

/// Splits `"address%ifname"` into its parts, resolving the interface.
///
/// Returns the whole string and no interface when there is no `%`; returns nil when the part
/// after the last `%` is empty or names no interface of this machine.
internal func splitScopedAddress(_ string: String) -> (address: String, interface: NWInterface?)? {
    guard let percent = string.lastIndex(of: "%") else { return (string, nil) }
    let scope = String(string[string.index(after: percent)...])
    guard let interface = NWInterface(systemInterfaceNamed: scope) else { return nil }
    return (String(string[..<percent]), interface)
}

/// Appends `%ifname` when the value is scoped.
internal func appendingScope(_ text: String, _ interface: NWInterface?) -> String {
    guard let interface else { return text }
    return text + "%" + interface.name
}
