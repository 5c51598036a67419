/// DNS-SD service types (RFC 6763 §7): `_name._tcp` or `_name._udp`, the name 1 to 15
/// characters of letters, digits and hyphens (RFC 6335 §5.1), a trailing dot allowed.
package enum MDNSServiceType {
    /// The type without a trailing dot.
    package static func normalized(_ type: String) -> String {
        type.hasSuffix(".") ? String(type.dropLast()) : type
    }

    package static func isValid(_ type: String) -> Bool {
        var labels = type.split(separator: ".", omittingEmptySubsequences: false)
        if labels.last == "" { labels.removeLast() }
        guard labels.count == 2, ["_tcp", "_udp"].contains(labels[1].lowercased()),
            labels[0].hasPrefix("_")
        else { return false }
        let name = labels[0].dropFirst()
        return (1...15).contains(name.count)
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }
}
