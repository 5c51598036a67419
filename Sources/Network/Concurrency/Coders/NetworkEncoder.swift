import Foundation

/// Turns a value into the bytes of one message (Foundation's `JSONEncoder` and
/// `PropertyListEncoder` conform).
public protocol NetworkEncoder {
    /// The encoded form of `value`.
    func encode<T: Encodable>(_ value: T) throws -> Data
}

/// Usable as a `Coder`'s encoder.
extension JSONEncoder: NetworkEncoder {}
/// Usable as a `Coder`'s encoder.
extension PropertyListEncoder: NetworkEncoder {}
