/// A NAT64 prefix (RFC 6052) learnt from the network's DNS64 (RFC 7050), used to reach IPv4
/// address literals from an IPv6-only path: the IPv4 address is embedded in the prefix.
package struct NAT64Prefix: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The prefix bits; bytes past `length` are zero.
    package let bytes: [UInt8]
    /// 32, 40, 48, 56, 64 or 96.
    package let length: Int

    /// The lengths RFC 6052 allows.
    package static let validLengths = [32, 40, 48, 56, 64, 96]

    /// The well-known prefix 64:ff9b::/96.
    package static let wellKnown = NAT64Prefix(validated: [0, 0x64, 0xff, 0x9b] + Array(repeating: 0, count: 12), length: 96)

    /// The name whose AAAA answers reveal the prefix, and the two IPv4 addresses it has.
    package static let discoveryName = "ipv4only.arpa"
    package static let wellKnownIPv4: [[UInt8]] = [[192, 0, 0, 170], [192, 0, 0, 171]]

    private init(validated bytes: [UInt8], length: Int) {
        self.bytes = bytes
        self.length = length
    }

    /// A prefix from 16 bytes and a length; nil unless RFC 6052 allows the length. The bits past
    /// the length are cleared.
    package init?(bytes: [UInt8], length: Int) {
        guard bytes.count == 16, Self.validLengths.contains(length) else { return nil }
        var cleared = bytes
        for index in (length / 8)..<16 { cleared[index] = 0 }
        self.init(validated: cleared, length: length)
    }

    /// Where the four IPv4 bytes sit in the IPv6 address for each prefix length (byte 8, bits
    /// 64–71, is always skipped: RFC 6052 keeps it zero).
    private static func positions(for length: Int) -> [Int] {
        switch length {
        case 32: return [4, 5, 6, 7]
        case 40: return [5, 6, 7, 9]
        case 48: return [6, 7, 9, 10]
        case 56: return [7, 9, 10, 11]
        case 64: return [9, 10, 11, 12]
        default: return [12, 13, 14, 15]
        }
    }

    /// The IPv6 address (16 bytes) that reaches `ipv4` (4 bytes) through this prefix.
    package func synthesize(_ ipv4: [UInt8]) -> [UInt8]? {
        guard ipv4.count == 4 else { return nil }
        var address = bytes
        for (index, position) in Self.positions(for: length).enumerated() { address[position] = ipv4[index] }
        return address
    }

    /// The IPv4 address embedded in `ipv6` at this prefix's positions.
    package func extract(_ ipv6: [UInt8]) -> [UInt8]? {
        guard ipv6.count == 16 else { return nil }
        return Self.positions(for: length).map { ipv6[$0] }
    }

    /// The prefixes RFC 7050 §3 finds in the AAAA answers for `ipv4only.arpa`: every answer in
    /// which one of the two well-known IPv4 addresses sits at a valid position, with the
    /// u-octet zero, gives the prefix before it. Longest embeddings are tried last so that a
    /// /96 answer is not misread as a shorter prefix. Duplicates are dropped, order kept.
    package static func discover(inAnswers answers: [[UInt8]]) -> [NAT64Prefix] {
        var found: [NAT64Prefix] = []
        for answer in answers where answer.count == 16 {
            for length in validLengths {
                guard length == 96 || answer[8] == 0 else { continue }
                let positions = positions(for: length)
                let embedded = positions.map { answer[$0] }
                guard wellKnownIPv4.contains(embedded) else { continue }
                // Everything after the embedded address (the suffix) must be zero.
                let suffixStart = (positions.last ?? 15) + 1
                guard suffixStart >= 16 || answer[suffixStart...].allSatisfy({ $0 == 0 }) else { continue }
                guard let prefix = NAT64Prefix(bytes: answer, length: length) else { continue }
                if !found.contains(prefix) { found.append(prefix) }
                break
            }
        }
        return found
    }

    package var description: String {
        var groups: [String] = []
        for index in stride(from: 0, to: 16, by: 2) {
            groups.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16))
        }
        return groups.joined(separator: ":") + "/\(length)"
    }
}
