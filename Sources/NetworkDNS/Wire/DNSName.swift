/// A domain name as a list of labels (raw octets, without the root label). Equality is exact;
/// DNS compares names case-insensitively, so use `lowercased()` or `equalsIgnoringCase(_:)` for
/// matching answers and for cache keys.
package struct DNSName: Hashable, Sendable, CustomStringConvertible {
    /// Wire-form limit including length octets and the root label (RFC 1035 section 2.3.4).
    package static let maximumWireLength = 255
    /// Longest single label (RFC 1035 section 2.3.4).
    package static let maximumLabelLength = 63

    /// The labels, most specific first; empty for the root.
    package private(set) var labels: [[UInt8]]

    /// The root name ".".
    package static let root = DNSName(validatedLabels: [])

    /// For the decoder, which has already checked every limit.
    init(validatedLabels labels: [[UInt8]]) {
        self.labels = labels
    }

    /// Builds a name from raw labels, checking the label and name limits.
    package init(labels: [[UInt8]]) throws(DNSWireError) {
        var total = 1
        for label in labels {
            guard !label.isEmpty else { throw .emptyLabel }
            guard label.count <= Self.maximumLabelLength else { throw .labelTooLong }
            total += label.count + 1
        }
        guard total <= Self.maximumWireLength else { throw .nameTooLong }
        self.labels = labels
    }

    /// Parses dotted text ("www.example.com", with or without the final dot). Backslash
    /// escapes are not interpreted: host names never need them.
    package init(_ text: String) throws(DNSWireError) {
        if text == "." || text.isEmpty {
            self.init(validatedLabels: [])
            return
        }
        var labels: [[UInt8]] = []
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() {
            if part.isEmpty {
                // Only a trailing dot may leave an empty part.
                if index == parts.count - 1 && index > 0 { continue }
                throw .emptyLabel
            }
            labels.append(Array(part))
        }
        try self.init(labels: labels)
    }

    /// Length of the uncompressed wire form.
    package var wireLength: Int { labels.reduce(1) { $0 + $1.count + 1 } }

    /// The name with ASCII letters folded to lower case (DNS case folding is ASCII only).
    package func lowercased() -> DNSName {
        DNSName(validatedLabels: labels.map { $0.map(Self.asciiLowercase) })
    }

    /// Case-insensitive comparison, as DNS defines it.
    package func equalsIgnoringCase(_ other: DNSName) -> Bool {
        guard labels.count == other.labels.count else { return false }
        for (left, right) in zip(labels, other.labels) {
            guard left.count == right.count else { return false }
            for (a, b) in zip(left, right) where Self.asciiLowercase(a) != Self.asciiLowercase(b) {
                return false
            }
        }
        return true
    }

    /// This name with `suffix` appended (for search domains).
    package func appending(_ suffix: DNSName) throws(DNSWireError) -> DNSName {
        try DNSName(labels: labels + suffix.labels)
    }

    /// Dotted text without the final dot; "." for the root. Dots and bytes that are not
    /// printable ASCII are escaped as \DDD so the text is unambiguous.
    package var description: String {
        guard !labels.isEmpty else { return "." }
        return labels.map { label in
            var text = ""
            for byte in label {
                if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "\\") || byte < 0x21 || byte > 0x7E {
                    let digits = String(byte)
                    text += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
                } else {
                    text.unicodeScalars.append(Unicode.Scalar(byte))
                }
            }
            return text
        }.joined(separator: ".")
    }

    static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}
