import NIOCore
import NetworkSystem

/// Decides whether a peer is on a directly connected network, for `acceptLocalOnly`: loopback,
/// link-local, or inside the prefix of one of this host's interface addresses.
enum LocalNetworkCheck {
    static func isLocal(_ address: SocketAddress, interfaces: [SystemInterface]) -> Bool {
        guard let bytes = rawBytes(address) else { return address.protocol == .unix }
        var candidate = bytes
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            candidate = Array(bytes[12..<16])  // IPv4-mapped peer on a dual-stack socket
        }
        if candidate.count == 4 {
            if candidate[0] == 127 || (candidate[0] == 169 && candidate[1] == 254) { return true }
        } else {
            if candidate == [UInt8](repeating: 0, count: 15) + [1] { return true }
            if candidate[0] == 0xfe && (candidate[1] & 0xc0) == 0x80 { return true }
        }
        for interface in interfaces {
            for local in interface.addresses where local.bytes.count == candidate.count {
                if IPLiteral.isWithin(candidate, network: local.bytes, prefixLength: local.prefixLength) { return true }
            }
        }
        return false
    }

    static func rawBytes(_ address: SocketAddress) -> [UInt8]? {
        switch address {
        case .v4(let v4):
            return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6):
            return withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
        case .unixDomainSocket:
            return nil
        }
    }
}
