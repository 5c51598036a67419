#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// IPv4 and IPv6 address literals as bytes, for SOCKS5 requests and `no_proxy` matching.
enum IPLiteral {
    /// The 4 or 16 bytes of an address literal, or nil when `text` is not one. Brackets and an
    /// IPv6 zone (`%eth0`) are ignored: neither means anything to a proxy.
    static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        var literal = String(text)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        if let percent = literal.firstIndex(of: "%") { literal = String(literal[..<percent]) }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    /// Canonical text for address bytes (4 or 16 of them).
    static func text(_ bytes: [UInt8]) -> String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var output = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &output, socklen_t(output.count)) != nil
        }
        guard ok else { return "" }
        return String(decoding: output.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the first `prefixLength` bits of `address` and `network` agree (same family).
    static func isWithin(_ address: [UInt8], network: [UInt8], prefixLength: Int) -> Bool {
        guard address.count == network.count, (0...address.count * 8).contains(prefixLength) else { return false }
        var bits = prefixLength
        for index in address.indices where bits > 0 {
            let take = min(8, bits)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if address[index] & mask != network[index] & mask { return false }
            bits -= take
        }
        return true
    }
}
