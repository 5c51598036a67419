import Foundation

/// Turns the bytes of one message back into a value (Foundation's `JSONDecoder` and
/// `PropertyListDecoder` conform).
public protocol NetworkDecoder {
    /// The value of `type` that `data` encodes.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

/// Usable as a `Coder`'s decoder.
extension JSONDecoder: NetworkDecoder {}
/// Usable as a `Coder`'s decoder.
extension PropertyListDecoder: NetworkDecoder {}
