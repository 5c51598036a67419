#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What kind of link an interface is (the Linux view of `NWInterface.InterfaceType`).
package enum SystemInterfaceType: String, Sendable, Hashable, CaseIterable {
    case loopback, wifi, cellular, wiredEthernet, other

    /// Parses the names the override syntax accepts (case-insensitive): `loopback`, `wifi`
    /// (`wlan`), `cellular` (`wwan`), `wiredEthernet` (`wired`, `ethernet`), `other`.
    package init?(overrideName: String) {
        switch overrideName.lowercased() {
        case "loopback", "lo": self = .loopback
        case "wifi", "wi-fi", "wlan": self = .wifi
        case "cellular", "wwan": self = .cellular
        case "wiredethernet", "wired", "ethernet": self = .wiredEthernet
        case "other": self = .other
        default: return nil
        }
    }
}

/// One address assigned to an interface.
package struct SystemAddress: Sendable, Hashable, CustomStringConvertible {
    package var family: SocketFamily
    /// Network-order bytes: 4 for `.inet`, 16 for `.inet6`.
    package var bytes: [UInt8]
    /// Length of the network prefix, from the netmask (0...32 or 0...128).
    package var prefixLength: Int
    /// IPv6 scope id (the interface index for link-local addresses); 0 otherwise.
    package var scopeID: UInt32

    package init(family: SocketFamily, bytes: [UInt8], prefixLength: Int, scopeID: UInt32 = 0) {
        self.family = family
        self.bytes = bytes
        self.prefixLength = prefixLength
        self.scopeID = scopeID
    }

    /// The address in presentation form (`inet_ntop`), without prefix or scope.
    package var presentation: String {
        let af = family == .inet ? AF_INET : AF_INET6
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok = bytes.withUnsafeBytes { raw in
            buffer.withUnsafeMutableBufferPointer { inet_ntop(af, raw.baseAddress, $0.baseAddress, socklen_t($0.count)) != nil }
        }
        guard ok else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package var description: String { "\(presentation)/\(prefixLength)" }
}

/// One network interface as Linux reports it, classified.
package struct SystemInterface: Sendable, Hashable, CustomStringConvertible {
    package var name: String
    package var index: Int
    package var type: SystemInterfaceType
    /// `IFF_UP`: administratively up.
    package var isUp: Bool
    /// `IFF_RUNNING`: the link has carrier (operationally up).
    package var isRunning: Bool
    /// `IFF_MULTICAST`.
    package var supportsMulticast: Bool
    /// Cellular interfaces are expensive unless an override says otherwise (as on Apple platforms).
    package var isExpensive: Bool
    /// Only an override makes an interface constrained (Linux has no Low Data Mode).
    package var isConstrained: Bool
    package var addresses: [SystemAddress]

    package init(
        name: String, index: Int, type: SystemInterfaceType, isUp: Bool, isRunning: Bool = true,
        supportsMulticast: Bool, isExpensive: Bool = false, isConstrained: Bool = false,
        addresses: [SystemAddress] = []
    ) {
        self.name = name
        self.index = index
        self.type = type
        self.isUp = isUp
        self.isRunning = isRunning
        self.supportsMulticast = supportsMulticast
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
        self.addresses = addresses
    }

    package var description: String {
        var flags: [String] = []
        if isUp { flags.append("up") }
        if isRunning { flags.append("running") }
        if supportsMulticast { flags.append("multicast") }
        if isExpensive { flags.append("expensive") }
        if isConstrained { flags.append("constrained") }
        return "\(name)(\(index)) \(type) [\(flags.joined(separator: ","))] \(addresses)"
    }
}
