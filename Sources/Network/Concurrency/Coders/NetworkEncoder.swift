import Foundation

/// Turns a value into the bytes of one message (Foundation's `JSONEncoder` and
/// `PropertyListEncoder` conform).
public protocol NetworkEncoder {
    /// The encoded form of `value`.
    func encode<T: Encodable>(_ value: T) throws -> Data
}

extension JSONEncoder: NetworkEncoder {}
extension PropertyListEncoder: NetworkEncoder {}
