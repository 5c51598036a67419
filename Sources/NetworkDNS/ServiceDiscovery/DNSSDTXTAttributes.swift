/// The key/value attributes of a DNS-SD TXT record (RFC 6763 §6): what a service advertises
/// beside its address, as an ordered list of `key`, `key=` or `key=value` strings, each at most
/// 255 bytes on the wire. Keys are printable US-ASCII without `=`, compared case-insensitively;
/// values are any bytes.
///
/// Decoding takes whatever a peer sent and never fails: a string cut short by the end of the
/// record ends the decoding, strings with an empty key are skipped, and of a key given twice the
/// first wins (§6.4).
package struct DNSSDTXTAttributes: Equatable, Hashable, Sendable {
    /// One attribute's value.
    package enum Value: Equatable, Hashable, Sendable {
        /// `key` alone: a boolean attribute that is present.
        case none
        /// `key=value`; an empty array is `key=`.
        case bytes([UInt8])
    }

    /// One `key[=value]` string.
    package struct Attribute: Equatable, Hashable, Sendable {
        package var key: String
        package var value: Value

        package init(key: String, value: Value) {
            self.key = key
            self.value = value
        }

        /// Its length on the wire, without the length byte.
        var encodedLength: Int {
            switch value {
            case .none: return key.utf8.count
            case .bytes(let bytes): return key.utf8.count + 1 + bytes.count
            }
        }
    }

    /// The attributes in wire order.
    package private(set) var attributes: [Attribute] = []

    /// The longest `key[=value]` string one length byte can announce.
    package static let maximumAttributeLength = 255

    package init() {}

    /// Decodes the TXT record's RDATA (a sequence of length-prefixed strings).
    package init<Bytes: Collection>(wire: Bytes) where Bytes.Element == UInt8 {
        var rest = wire[...]
        while let length = rest.first {
            rest = rest.dropFirst()
            guard rest.count >= Int(length) else { break }
            add(rest.prefix(Int(length)))
            rest = rest.dropFirst(Int(length))
        }
    }

    /// The attributes of a TXT record's strings, as the DNS codec decodes them
    /// (`DNSRecordData.txt`), with the rules of `init(wire:)`.
    package init(strings: [[UInt8]]) {
        for string in strings { add(string) }
    }

    /// Adds what one string says, unless it says nothing valid or its key is there already.
    private mutating func add<Bytes: Collection>(_ string: Bytes) where Bytes.Element == UInt8 {
        // (An empty string, such as the single zero byte of an empty record, carries nothing.)
        guard let attribute = Self.decode(string) else { return }
        if index(of: attribute.key) == nil { attributes.append(attribute) }
    }

    private static func decode<Bytes: Collection>(_ string: Bytes) -> Attribute? where Bytes.Element == UInt8 {
        guard string.count <= maximumAttributeLength else { return nil }
        let equals = string.firstIndex(of: UInt8(ascii: "="))
        let keyBytes = string[..<(equals ?? string.endIndex)]
        guard !keyBytes.isEmpty, keyBytes.allSatisfy(isKeyByte) else { return nil }
        let key = String(decoding: keyBytes, as: UTF8.self)
        guard let equals else { return Attribute(key: key, value: .none) }
        return Attribute(key: key, value: .bytes(Array(string[string.index(after: equals)...])))
    }

    /// The record's strings, one `key[=value]` per attribute; a record without attributes is
    /// one empty string, as RFC 6763 §6.1 requires.
    package var strings: [[UInt8]] {
        guard !attributes.isEmpty else { return [[]] }
        return attributes.map { attribute in
            var string = Array(attribute.key.utf8)
            if case .bytes(let value) = attribute.value {
                string.append(UInt8(ascii: "="))
                string += value
            }
            return string
        }
    }

    /// The RDATA to send: `strings`, each with its length byte (an empty record is one zero byte).
    package var wire: [UInt8] {
        strings.flatMap { [UInt8($0.count)] + $0 }
    }

    /// Whether `key` may name an attribute: at least one printable US-ASCII character, no `=`.
    package static func isValidKey(_ key: String) -> Bool {
        !key.utf8.isEmpty && key.utf8.count <= maximumAttributeLength && key.utf8.allSatisfy(isKeyByte)
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte <= 0x7E && byte != UInt8(ascii: "=")
    }

    /// Where the attribute named `key` (in any letter case) is.
    package func index(of key: String) -> Int? {
        let wanted = Self.folded(key)
        return attributes.firstIndex { Self.folded($0.key) == wanted }
    }

    /// The value of the attribute named `key` (in any letter case).
    package func value(for key: String) -> Value? {
        index(of: key).map { attributes[$0].value }
    }

    /// Sets `key` to `value`, in the place of an attribute with the same key in any letter case,
    /// or at the end. False (and nothing changes) for an invalid key or a string over 255 bytes.
    @discardableResult
    package mutating func set(_ value: Value, for key: String) -> Bool {
        guard Self.isValidKey(key) else { return false }
        let attribute = Attribute(key: key, value: value)
        guard attribute.encodedLength <= Self.maximumAttributeLength else { return false }
        if let index = index(of: key) {
            attributes[index] = attribute
        } else {
            attributes.append(attribute)
        }
        return true
    }

    /// Removes the attribute named `key` (in any letter case). False when there is none.
    @discardableResult
    package mutating func remove(_ key: String) -> Bool {
        guard let index = index(of: key) else { return false }
        attributes.remove(at: index)
        return true
    }

    /// Equal when they hold the same keys (in any letter case) with the same values, in any
    /// order: the order of a TXT record's strings carries no meaning.
    package static func == (lhs: DNSSDTXTAttributes, rhs: DNSSDTXTAttributes) -> Bool {
        lhs.canonical == rhs.canonical
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(canonical)
    }

    private var canonical: [Attribute] {
        attributes.map { Attribute(key: Self.folded($0.key), value: $0.value) }.sorted { $0.key < $1.key }
    }

    /// ASCII letters in lower case (keys are ASCII).
    private static func folded(_ key: String) -> String {
        String(decoding: key.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
