#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// A socket address as the engine hands it to the `Network` module: address bytes (network
/// order) and port, or a UNIX-domain path. The facade builds endpoints and paths from it without
/// knowing the socket library underneath.
package enum FlowAddress: Sendable, Hashable {
    /// 4 address bytes and a port.
    case ipv4(bytes: [UInt8], port: UInt16)
    /// 16 address bytes, a port and the scope (interface index; 0 for none).
    case ipv6(bytes: [UInt8], port: UInt16, scopeID: UInt32)
    /// A UNIX-domain socket path (empty when unnamed).
    case unix(path: String)

    /// The address of a NIO socket address.
    package init(_ address: SocketAddress) {
        switch address {
        case .v4(let v4):
            let bytes = withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
            self = .ipv4(bytes: bytes, port: UInt16(clamping: address.port ?? 0))
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            self = .ipv6(bytes: bytes, port: UInt16(clamping: address.port ?? 0), scopeID: v6.address.sin6_scope_id)
        case .unixDomainSocket:
            self = .unix(path: address.pathname ?? "")
        }
    }

    /// Whether this is an IPv6 address (IPv4-mapped ones included).
    package var isIPv6: Bool {
        if case .ipv6 = self { return true }
        return false
    }

    /// Network-order address bytes, an IPv4-mapped IPv6 address unmapped to its 4 bytes; empty
    /// for a UNIX-domain path.
    package var unmappedBytes: [UInt8] {
        switch self {
        case .ipv4(let bytes, _): return bytes
        case .ipv6(let bytes, _, _):
            if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
                return Array(bytes[12...])
            }
            return bytes
        case .unix: return []
        }
    }

    /// Whether the address is a loopback one (127/8, or ::1).
    package var isLoopback: Bool {
        let raw = unmappedBytes
        return (raw.count == 4 && raw[0] == 127) || raw == [UInt8](repeating: 0, count: 15) + [1]
    }
}

extension FlowTarget {
    /// The address of an `.address` target, nil for the others.
    package var flowAddress: FlowAddress? {
        if case .address(let address) = self { return FlowAddress(address) }
        return nil
    }
}
