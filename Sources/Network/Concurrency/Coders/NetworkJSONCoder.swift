import Foundation

/// The JSON coder of ``Coder`` stacks (`using: .json`).
public struct NetworkJSONCoder: NetworkCoder, Sendable {
    /// A JSON coder with Foundation's default settings.
    public init() {}
    /// A new `JSONDecoder`.
    public func makeDecoder() -> JSONDecoder { JSONDecoder() }
    /// A new `JSONEncoder`.
    public func makeEncoder() -> JSONEncoder { JSONEncoder() }
}
