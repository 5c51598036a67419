import Foundation
import NetworkDNS

/// The attributes a Bonjour service advertises beside its address: a DNS-SD TXT record's
/// `key=value` pairs. Set one on an ``NWListener/Service`` to describe a service; browse results
/// and their endpoints carry the record a service advertised.
///
/// Keys are printable ASCII without `=` and match in any letter case; each `key=value` pair must
/// fit in 255 bytes. Entries keep the order they were added or received in; two records are
/// equal when they hold the same entries in any order.
public struct NWTXTRecord: Collection, CustomDebugStringConvertible, Equatable, Sendable {
    /// A pair of the record: its key and its entry.
    public typealias Element = (key: String, value: NWTXTRecord.Entry)

    var attributes: DNSSDTXTAttributes

    /// A record holding every pair of `dictionary` as a string value, in the order of their keys
    /// (a dictionary has none of its own). Pairs with an invalid key, or too long, are left out.
    public init(_ dictionary: [String: String] = [:]) {
        attributes = DNSSDTXTAttributes()
        for key in dictionary.keys.sorted() {
            if let value = dictionary[key] { attributes.set(.bytes(Array(value.utf8)), for: key) }
        }
    }

    /// The record holding `attributes` (as the engine decoded them from a TXT record).
    init(attributes: DNSSDTXTAttributes) {
        self.attributes = attributes
    }

    /// The record in wire format (the TXT record's data: length-prefixed `key=value` strings).
    /// Whatever cannot be read is left out: a string cut short ends the record, a string with
    /// no key is skipped, and of a key given twice the first counts.
    public init(_ data: Data) {
        attributes = DNSSDTXTAttributes(wire: data)
    }

    /// The pairs whose values read as text: string and empty entries, and keys without a value
    /// (as empty strings). Data entries that are not UTF-8 are left out.
    public var dictionary: [String: String] {
        var dictionary: [String: String] = [:]
        for (key, entry) in self {
            dictionary[key] = entry == .none ? "" : entry.text
        }
        return dictionary
    }

    /// The record in wire format; a record without entries is a single zero byte, as DNS-SD
    /// requires.
    public var data: Data { Data(attributes.wire) }

    /// The value of `key` as a string: nil when the key is absent, has no value, or its value is
    /// not UTF-8. Setting a string stores it as the key's value; setting nil removes the key.
    public subscript(key: String) -> String? {
        get { getEntry(for: key)?.text }
        set {
            if let newValue {
                setEntry(.string(newValue), for: key)
            } else {
                removeEntry(key: key)
            }
        }
    }

    /// The entry of `key` (matched in any letter case); nil when the record has none or the key
    /// is invalid.
    public func getEntry(for key: String) -> NWTXTRecord.Entry? {
        attributes.value(for: key).map(Entry.init(attribute:))
    }

    /// Sets the entry of `key`, replacing one whose key matches in any letter case. Returns
    /// false, changing nothing, when the key is invalid or the pair would not fit in 255 bytes.
    @discardableResult
    public mutating func setEntry(_ entry: NWTXTRecord.Entry, for key: String) -> Bool {
        attributes.set(entry.attributeValue, for: key)
    }

    /// Removes the entry of `key` (matched in any letter case). Returns false when there was none.
    @discardableResult
    public mutating func removeEntry(key: String) -> Bool {
        attributes.remove(key)
    }

    // MARK: Collection

    /// A position of a pair in the record.
    public struct Index: Comparable, Hashable, Sendable {
        let offset: Int

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Index, rhs: Index) -> Bool { lhs.offset < rhs.offset }
    }

    /// The position of the first pair.
    public var startIndex: Index { Index(offset: 0) }
    /// The position after the last pair.
    public var endIndex: Index { Index(offset: attributes.attributes.count) }

    /// The position after `i`.
    public func index(after i: Index) -> Index { Index(offset: i.offset + 1) }

    /// The pair at `position`.
    public subscript(position: Index) -> Element {
        let attribute = attributes.attributes[position.offset]
        return (attribute.key, Entry(attribute: attribute.value))
    }

    /// The pairs, as `key=value` (and `key` alone for a key without a value).
    public var debugDescription: String {
        "[" + map { key, entry in
            switch entry {
            case .none: return key
            case .empty: return "\(key)="
            case .string(let value): return "\(key)=\(value)"
            case .data(let data): return "\(key)=<\(data.count) bytes>"
            }
        }.joined(separator: ", ") + "]"
    }

    /// Whether both hold the same pairs, keys compared in any letter case, in any order.
    public static func == (lhs: NWTXTRecord, rhs: NWTXTRecord) -> Bool {
        lhs.attributes == rhs.attributes
    }
}
