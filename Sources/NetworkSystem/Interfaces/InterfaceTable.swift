#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A snapshot of the machine's interfaces (`getifaddrs`), classified by type.
///
/// Classification (first match wins; an override replaces it):
/// 1. `IFF_LOOPBACK` → loopback;
/// 2. `/sys/class/net/X/wireless` or `/sys/class/net/X/phy80211` exists → wifi;
/// 3. `DEVTYPE=wwan` in `/sys/class/net/X/uevent` → cellular;
/// 4. `/sys/class/net/X/type` is 1 (`ARPHRD_ETHER`) → wiredEthernet;
/// 5. otherwise → other.
package enum InterfaceTable {
    /// The environment variable holding overrides (see `InterfaceOverride`).
    package static let overrideVariable = "NETWORK_INTERFACE_TYPES"
    /// The environment variable naming an override file (same syntax, one entry per line).
    package static let overrideFileVariable = "NETWORK_INTERFACE_TYPES_FILE"

    /// All interfaces, sorted by index, with the overrides from the environment applied.
    package static func current() -> [SystemInterface] {
        current(overrides: environmentOverrides().overrides)
    }

    /// All interfaces, sorted by index, with the given overrides applied.
    package static func current(overrides: [String: InterfaceOverride], sysfsRoot: String = "/sys/class/net") -> [SystemInterface] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return [] }
        defer { freeifaddrs(head) }

        var byName: [String: (flags: UInt32, addresses: [SystemAddress])] = [:]
        var order: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let cName = entry.pointee.ifa_name else { continue }
            let name = String(cString: cName)
            if byName[name] == nil {
                byName[name] = (entry.pointee.ifa_flags, [])
                order.append(name)
            } else {
                byName[name]!.flags |= entry.pointee.ifa_flags
            }
            if let address = systemAddress(entry.pointee.ifa_addr, netmask: entry.pointee.ifa_netmask) {
                if !byName[name]!.addresses.contains(address) { byName[name]!.addresses.append(address) }
            }
        }

        var result: [SystemInterface] = []
        for name in order {
            guard let info = byName[name], let index = index(named: name) else { continue }
            result.append(makeInterface(name: name, index: index, flags: info.flags, addresses: info.addresses,
                                        override: overrides[name], sysfsRoot: sysfsRoot))
        }
        return result.sorted { $0.index < $1.index }
    }

    /// Builds one interface record: classification, then defaults (cellular is expensive), then
    /// the override.
    package static func makeInterface(
        name: String, index: Int, flags: UInt32, addresses: [SystemAddress],
        override: InterfaceOverride?, sysfsRoot: String = "/sys/class/net"
    ) -> SystemInterface {
        let type = override?.type ?? classify(name: name, flags: flags, sysfsRoot: sysfsRoot)
        return SystemInterface(
            name: name, index: index, type: type,
            isUp: flags & UInt32(IFF_UP) != 0,
            isRunning: flags & UInt32(IFF_RUNNING) != 0,
            supportsMulticast: flags & UInt32(IFF_MULTICAST) != 0,
            isExpensive: override?.isExpensive ?? (type == .cellular),
            isConstrained: override?.isConstrained ?? false,
            addresses: addresses)
    }

    /// The type of interface `name` from its flags and its sysfs entries under `sysfsRoot`.
    package static func classify(name: String, flags: UInt32, sysfsRoot: String = "/sys/class/net") -> SystemInterfaceType {
        if flags & UInt32(IFF_LOOPBACK) != 0 { return .loopback }
        let dir = sysfsRoot + "/" + name
        if SysFS.exists(dir + "/wireless") || SysFS.exists(dir + "/phy80211") { return .wifi }
        if let uevent = SysFS.read(dir + "/uevent") {
            for line in uevent.split(separator: "\n") where line.trimmingWhitespace == "DEVTYPE=wwan" {
                return .cellular
            }
        }
        if let type = SysFS.readInt(dir + "/type") {
            if type == LinuxConstants.ARPHRD_ETHER { return .wiredEthernet }
            if type == LinuxConstants.ARPHRD_LOOPBACK { return .loopback }
        }
        return .other
    }

    /// Overrides from `NETWORK_INTERFACE_TYPES_FILE` (if set and readable), then
    /// `NETWORK_INTERFACE_TYPES` (which wins field by field).
    package static func environmentOverrides() -> InterfaceOverride.Parsed {
        var text = ""
        if let path = getenv(overrideFileVariable).map({ String(cString: $0) }), !path.isEmpty {
            if let file = SysFS.read(path) { text += file + "\n" }
        }
        if let value = getenv(overrideVariable).map({ String(cString: $0) }) { text += value }
        return InterfaceOverride.parse(text)
    }

    /// `if_nametoindex`; nil if there is no such interface.
    package static func index(named name: String) -> Int? {
        let i = if_nametoindex(name)
        return i == 0 ? nil : Int(i)
    }

    /// `if_indextoname`; nil if there is no interface with that index.
    package static func name(index: Int) -> String? {
        guard index > 0, index <= Int(UInt32.max) else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        return buffer.withUnsafeMutableBufferPointer { b -> String? in
            guard if_indextoname(UInt32(index), b.baseAddress) != nil else { return nil }
            return String(cString: b.baseAddress!)
        }
    }

    /// An IPv4/IPv6 `sockaddr` and its netmask as a `SystemAddress`; nil for other families.
    package static func systemAddress(_ address: UnsafeMutablePointer<sockaddr>?, netmask: UnsafeMutablePointer<sockaddr>?) -> SystemAddress? {
        guard let address else { return nil }
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                withUnsafeBytes(of: p.pointee.sin_addr) { Array($0) }
            }
            var prefix = 32
            if let netmask, Int32(netmask.pointee.sa_family) == AF_INET || netmask.pointee.sa_family == 0 {
                prefix = netmask.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                    withUnsafeBytes(of: p.pointee.sin_addr) { prefixLength(of: $0) }
                }
            }
            return SystemAddress(family: .inet, bytes: bytes, prefixLength: prefix)
        case AF_INET6:
            let (bytes, scope) = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                (withUnsafeBytes(of: p.pointee.sin6_addr) { Array($0) }, p.pointee.sin6_scope_id)
            }
            var prefix = 128
            if let netmask {
                prefix = netmask.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                    withUnsafeBytes(of: p.pointee.sin6_addr) { prefixLength(of: $0) }
                }
            }
            return SystemAddress(family: .inet6, bytes: bytes, prefixLength: prefix, scopeID: scope)
        default:
            return nil
        }
    }

    /// The number of leading one bits of a netmask.
    package static func prefixLength(of mask: UnsafeRawBufferPointer) -> Int {
        var n = 0
        for byte in mask {
            if byte == 0xFF { n += 8; continue }
            n += byte.leadingZeroBitCount == 0 ? (~byte).leadingZeroBitCount : 0
            break
        }
        return n
    }
}
