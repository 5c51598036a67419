import Foundation

extension NWEndpoint {
    /// A host to connect to or listen on: a name still to be resolved, or a literal address.
    public enum Host: CustomDebugStringConvertible, Equatable, ExpressibleByExtendedGraphemeClusterLiteral,
        ExpressibleByStringLiteral, ExpressibleByUnicodeScalarLiteral, Hashable, Sendable
    {
        /// A host name (resolved through DNS, `/etc/hosts` or mDNS when used), optionally scoped
        /// to one interface.
        case name(String, NWInterface?)
        /// A literal IPv4 address.
        case ipv4(IPv4Address)
        /// A literal IPv6 address.
        case ipv6(IPv6Address)

        /// Interprets a string as a host.
        ///
        /// - An IPv4 literal becomes ``ipv4(_:)``; an IPv6 literal becomes ``ipv6(_:)``, except
        ///   an IPv4-mapped one (`::ffff:a.b.c.d`), which becomes ``ipv4(_:)``.
        /// - A literal may carry a `%ifname` suffix naming an interface of this machine.
        /// - Anything else becomes ``name(_:_:)``. A trailing `%ifname` naming an existing
        ///   interface is removed from the name and becomes its scope; otherwise the string is
        ///   kept whole and unscoped.
        public init(_ string: String) {
            if let ipv4 = IPv4Address(string) {
                self = .ipv4(ipv4)
                return
            }
            if let ipv6 = IPv6Address(string) {
                if ipv6.isIPv4Mapped, let ipv4 = ipv6.asIPv4 {
                    self = .ipv4(ipv4)
                } else {
                    self = .ipv6(ipv6)
                }
                return
            }
            if let percent = string.lastIndex(of: "%"),
                let interface = NWInterface(systemInterfaceNamed: String(string[string.index(after: percent)...]))
            {
                self = .name(String(string[..<percent]), interface)
                return
            }
            self = .name(string, nil)
        }

        /// Same as ``init(_:)``, so that a string literal can be used where a host is expected.
        public init(stringLiteral value: String) {
            self.init(value)
        }

        /// Same as ``init(_:)``, for single-character literals.
        public init(unicodeScalarLiteral value: String) {
            self.init(value)
        }

        /// Same as ``init(_:)``, for single-grapheme literals.
        public init(extendedGraphemeClusterLiteral value: String) {
            self.init(value)
        }

        /// The interface the host is scoped to, whichever case it is.
        public var interface: NWInterface? {
            switch self {
            case .name(_, let interface): return interface
            case .ipv4(let address): return address.interface
            case .ipv6(let address): return address.interface
            }
        }

        /// The name or the address text, followed by `%ifname` when the host is scoped.
        public var debugDescription: String {
            switch self {
            case .name(let name, let interface): return appendingScope(name, interface)
            case .ipv4(let address): return address.debugDescription
            case .ipv6(let address): return address.debugDescription
            }
        }
    }
}
