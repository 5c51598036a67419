/// A SOCKS5 destination (DST.ADDR, RFC 1928 §5): an address, or a name the proxy resolves.
package enum SOCKS5Address: Sendable, Equatable {
    /// Four bytes, network order.
    case ipv4([UInt8])
    /// Sixteen bytes, network order.
    case ipv6([UInt8])
    /// A host name of 1 to 255 bytes, resolved by the proxy (`socks5h`).
    case domain(String)

    /// The ATYP byte.
    var addressType: UInt8 {
        switch self {
        case .ipv4: return 0x01
        case .domain: return 0x03
        case .ipv6: return 0x04
        }
    }

    /// The DST.ADDR bytes, with the length prefix for names.
    var wireBytes: [UInt8] {
        switch self {
        case .ipv4(let bytes), .ipv6(let bytes): return bytes
        case .domain(let name): return [UInt8(truncatingIfNeeded: name.utf8.count)] + Array(name.utf8)
        }
    }
}
