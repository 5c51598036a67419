import Foundation
import NetworkDNS

extension NWTXTRecord {
    /// The value a key of a TXT record maps to.
    public enum Entry: CustomDebugStringConvertible, Equatable, Hashable, Sendable {
        /// The key is present without a value (`key`: a flag).
        case none
        /// The key has an empty value (`key=`).
        case empty
        /// The key has a text value.
        case string(String)
        /// The key has a value of bytes (received values that are not UTF-8 read as this).
        case data(Data)

        /// `.none` for nil, `.empty` for no bytes, otherwise `.data`.
        public init(_ data: Data?) {
            guard let data else {
                self = .none
                return
            }
            self = data.isEmpty ? .empty : .data(data)
        }

        /// The value's bytes: nil for `.none`, empty for `.empty`, a string's UTF-8.
        public var data: Data? {
            switch self {
            case .none: return nil
            case .empty: return Data()
            case .string(let value): return Data(value.utf8)
            case .data(let data): return data
            }
        }

        /// The entry, as `none`, `empty`, the string, or the data's size.
        public var debugDescription: String {
            switch self {
            case .none: return "none"
            case .empty: return "empty"
            case .string(let value): return value
            case .data(let data): return "\(data.count) bytes"
            }
        }

        /// The value as text: nil for `.none` and for data that is not UTF-8.
        var text: String? {
            switch self {
            case .none: return nil
            case .empty: return ""
            case .string(let value): return value
            case .data(let data): return String(validating: data, as: UTF8.self)
            }
        }

        /// A received value: text when it is UTF-8.
        init(attribute value: DNSSDTXTAttributes.Value) {
            switch value {
            case .none: self = .none
            case .bytes(let bytes) where bytes.isEmpty: self = .empty
            case .bytes(let bytes): self = String(validating: bytes, as: UTF8.self).map(Entry.string) ?? .data(Data(bytes))
            }
        }

        /// The value as it goes on the wire.
        var attributeValue: DNSSDTXTAttributes.Value {
            switch self {
            case .none: return .none
            case .empty: return .bytes([])
            case .string(let value): return .bytes(Array(value.utf8))
            case .data(let data): return .bytes(Array(data))
            }
        }
    }
}
