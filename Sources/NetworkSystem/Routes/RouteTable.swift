/// The kernel's main routing tables as `/proc/net/route` (IPv4) and `/proc/net/ipv6_route`
/// (IPv6) show them for the calling process's network namespace. Routes that are down or
/// reject traffic (`RTF_REJECT`, the `lo` "unreachable" entries) are left out.
///
/// Policy routing (rules, other tables) is not read: the main table is what decides whether a
/// machine "has a network" in the sense of a path.
package enum RouteTable {
    /// Every usable route of both families.
    package static func current(procNet: String = "/proc/net") -> [SystemRoute] {
        parseIPv4(SysFS.read(procNet + "/route", limit: 1 << 20) ?? "")
            + parseIPv6(SysFS.read(procNet + "/ipv6_route", limit: 1 << 20) ?? "")
    }

    private static let up: UInt32 = 0x0001  // RTF_UP
    private static let gatewayFlag: UInt32 = 0x0002  // RTF_GATEWAY
    private static let reject: UInt32 = 0x0200  // RTF_REJECT

    /// `/proc/net/route`: a header line, then `Iface Destination Gateway Flags RefCnt Use Metric
    /// Mask MTU Window IRTT`, addresses as host-order (little-endian) hex words.
    package static func parseIPv4(_ text: String) -> [SystemRoute] {
        var routes: [SystemRoute] = []
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8,
                let destination = UInt32(fields[1], radix: 16), let gateway = UInt32(fields[2], radix: 16),
                let flags = UInt32(fields[3], radix: 16), let metric = UInt32(fields[6]),
                let mask = UInt32(fields[7], radix: 16),
                flags & up != 0, flags & reject == 0
            else { continue }
            routes.append(SystemRoute(
                family: .inet, interfaceName: String(fields[0]), destination: bytes(littleEndian: destination),
                prefixLength: mask.nonzeroBitCount,
                gateway: flags & gatewayFlag != 0 ? bytes(littleEndian: gateway) : nil, metric: metric))
        }
        return routes
    }

    /// `/proc/net/ipv6_route`: `destination prefix source prefix next-hop metric refcnt use
    /// flags interface`, addresses as 32 hex digits in network order, numbers in hex.
    package static func parseIPv6(_ text: String) -> [SystemRoute] {
        var routes: [SystemRoute] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 10,
                let destination = hexBytes(fields[0]), let prefix = Int(fields[1], radix: 16),
                let nextHop = hexBytes(fields[4]), let metric = UInt32(fields[5], radix: 16),
                let flags = UInt32(fields[8], radix: 16),
                flags & up != 0, flags & reject == 0
            else { continue }
            let hasGateway = flags & gatewayFlag != 0 && nextHop.contains(where: { $0 != 0 })
            routes.append(SystemRoute(
                family: .inet6, interfaceName: String(fields[9]), destination: destination, prefixLength: prefix,
                gateway: hasGateway ? nextHop : nil, metric: metric))
        }
        return routes
    }

    private static func bytes(littleEndian word: UInt32) -> [UInt8] {
        [UInt8(word & 0xff), UInt8((word >> 8) & 0xff), UInt8((word >> 16) & 0xff), UInt8(word >> 24)]
    }

    private static func hexBytes(_ text: Substring) -> [UInt8]? {
        guard text.count == 32 else { return nil }
        var result: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            result.append(byte)
            index = next
        }
        return result
    }
}
