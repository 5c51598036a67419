/// RFC 6724 §6 destination address selection, kept to the rules Linux gives us the facts for.
///
/// Everything here is a pure function of the destination and the source address the kernel
/// would pick for it (`SourceAddressProbe` asks the kernel, at the edge). Addresses are handled
/// in their 16-byte IPv6 form, IPv4 as `::ffff:a.b.c.d`, as the RFC's policy table expects.
///
/// Rules applied, in order: 1 avoid unusable destinations (no source: no route), 2 prefer
/// matching scope, 5 prefer matching label, 6 prefer higher precedence, 8 prefer smaller scope,
/// 9 longest matching prefix with the source, 10 otherwise keep the resolver's order. Rules 3
/// (deprecated source), 4 (home address) and 7 (native transport) need facts the kernel does not
/// hand out per destination, and are left out.
package enum AddressSorting {
    /// The source the kernel would use for one destination.
    package struct Source: Sendable, Hashable {
        /// 16 bytes; IPv4 as an IPv4-mapped IPv6 address.
        package var address: [UInt8]
        /// The on-link prefix length of that source, when known. It bounds rule 9: the bits
        /// after the prefix (an IPv6 interface identifier, an IPv4 host part) say nothing about
        /// closeness. Unknown means 64 for IPv6 and "rule 9 off" for IPv4, so DNS round robin
        /// among IPv4 addresses is not undone by accident.
        package var prefixLength: Int?

        package init(address: [UInt8], prefixLength: Int? = nil) {
            self.address = address
            self.prefixLength = prefixLength
        }
    }

    /// How good a destination is; a larger key is a better destination. Each field is one rule,
    /// in the order the RFC applies them, so comparing keys field by field is the RFC's pairwise
    /// comparison. Rule 9's field only ever decides between addresses of the same family: with
    /// the default policy table, the two families never share a precedence.
    package struct Key: Comparable, Hashable, Sendable {
        var usable: Bool
        var scopeMatches: Bool
        var labelMatches: Bool
        var precedence: Int
        /// Rule 8 prefers the smaller scope, so the scope is stored negated.
        var negatedScope: Int
        var commonPrefixLength: Int

        /// The key of a destination nothing is known about (unix sockets, single candidates):
        /// every such key ties, and ties keep the given order.
        package static let neutral = Key(
            usable: true, scopeMatches: true, labelMatches: true, precedence: 0, negatedScope: 0, commonPrefixLength: 0)

        private var fields: (Int, Int, Int, Int, Int, Int) {
            (usable ? 1 : 0, scopeMatches ? 1 : 0, labelMatches ? 1 : 0, precedence, negatedScope, commonPrefixLength)
        }

        package static func < (lhs: Key, rhs: Key) -> Bool {
            lhs.fields < rhs.fields
        }
    }

    /// The key of `destination` (16 bytes) reached from `source` (nil: unreachable).
    package static func key(destination: [UInt8], source: Source?) -> Key {
        let destinationPolicy = policy(destination)
        let destinationScope = scope(destination)
        guard let source else {
            return Key(
                usable: false, scopeMatches: false, labelMatches: false,
                precedence: destinationPolicy.precedence, negatedScope: -destinationScope, commonPrefixLength: 0)
        }
        return Key(
            usable: true,
            scopeMatches: scope(source.address) == destinationScope,
            labelMatches: policy(source.address).label == destinationPolicy.label,
            precedence: destinationPolicy.precedence,
            negatedScope: -destinationScope,
            commonPrefixLength: matchingPrefixLength(source, destination))
    }

    /// `items` best first; items with equal keys keep their order (rule 10).
    package static func sorted<T>(_ items: [T], by key: (T) -> Key) -> [T] {
        let keyed = items.enumerated().map { (offset: $0.offset, key: key($0.element), item: $0.element) }
        return keyed.sorted { a, b in
            a.key != b.key ? a.key > b.key : a.offset < b.offset
        }.map(\.item)
    }

    /// The 16-byte form of an IPv4 address.
    package static func mapped(ipv4 bytes: [UInt8]) -> [UInt8] {
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] + bytes
    }

    // MARK: - The RFC's tables

    private struct PolicyEntry {
        var prefix: [UInt8]
        var length: Int
        var precedence: Int
        var label: Int
    }

    /// RFC 6724 §2.1's default policy table.
    private static let policyTable: [PolicyEntry] = [
        PolicyEntry(prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], length: 128, precedence: 50, label: 0),
        PolicyEntry(prefix: [], length: 0, precedence: 40, label: 1),
        PolicyEntry(prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], length: 96, precedence: 35, label: 4),
        PolicyEntry(prefix: [0x20, 0x02], length: 16, precedence: 30, label: 2),
        PolicyEntry(prefix: [0x20, 0x01, 0, 0], length: 32, precedence: 5, label: 5),
        PolicyEntry(prefix: [0xfc], length: 7, precedence: 3, label: 13),
        PolicyEntry(prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], length: 96, precedence: 1, label: 3),
        PolicyEntry(prefix: [0xfe, 0xc0], length: 10, precedence: 1, label: 11),
        PolicyEntry(prefix: [0x3f, 0xfe], length: 16, precedence: 1, label: 12),
    ]

    /// Precedence and label of the longest matching policy entry.
    package static func policy(_ address: [UInt8]) -> (precedence: Int, label: Int) {
        var best: PolicyEntry?
        for entry in policyTable where prefixLength(entry.prefix, address, limit: entry.length) >= entry.length {
            if best.map({ entry.length > $0.length }) ?? true { best = entry }
        }
        return (best?.precedence ?? 40, best?.label ?? 1)
    }

    /// Scope values of RFC 4291 / RFC 6724 §3.1 (2 link-local, 5 site-local, 14 global).
    package static func scope(_ address: [UInt8]) -> Int {
        guard address.count == 16 else { return 14 }
        if isIPv4Mapped(address) {
            // §3.2: loopback and 169.254/16 are link-local; everything else, private ranges
            // included, is global.
            if address[12] == 127 || (address[12] == 169 && address[13] == 254) { return 2 }
            return 14
        }
        if address[0] == 0xff { return Int(address[1] & 0x0f) }
        if address == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] { return 2 }
        if address[0] == 0xfe && address[1] & 0xc0 == 0x80 { return 2 }
        if address[0] == 0xfe && address[1] & 0xc0 == 0xc0 { return 5 }
        return 14
    }

    private static func isIPv4Mapped(_ address: [UInt8]) -> Bool {
        address.count == 16 && address[0..<10].allSatisfy { $0 == 0 } && address[10] == 0xff && address[11] == 0xff
    }

    /// Rule 9's CommonPrefixLen, bounded by the source's prefix.
    private static func matchingPrefixLength(_ source: Source, _ destination: [UInt8]) -> Int {
        if isIPv4Mapped(source.address) {
            guard isIPv4Mapped(destination), let length = source.prefixLength else { return 0 }
            return prefixLength(Array(source.address[12...]), Array(destination[12...]), limit: min(length, 32))
        }
        return prefixLength(source.address, destination, limit: min(source.prefixLength ?? 64, 128))
    }

    /// Leading bits `a` and `b` share, at most `limit` (a shorter array ends the match).
    private static func prefixLength(_ a: [UInt8], _ b: [UInt8], limit: Int) -> Int {
        var bits = 0
        for (x, y) in zip(a, b) {
            guard bits < limit else { break }
            let differing = x ^ y
            if differing == 0 {
                bits += 8
                continue
            }
            bits += differing.leadingZeroBitCount
            break
        }
        return min(bits, limit)
    }
}
