import Foundation

/// The property-list coder of ``Coder`` stacks (`using: .propertyList`): binary property lists.
public struct NetworkPropertyListCoder: NetworkCoder, Sendable {
    /// A binary property-list coder.
    public init() {}
    /// A new `PropertyListDecoder` (it reads any property-list format).
    public func makeDecoder() -> PropertyListDecoder { PropertyListDecoder() }
    /// A new `PropertyListEncoder` writing binary property lists.
    public func makeEncoder() -> PropertyListEncoder {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return encoder
    }
}
