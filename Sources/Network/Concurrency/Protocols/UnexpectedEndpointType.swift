/// Thrown by a connection made to a ``Connectable`` of a kind this module cannot reach (one
/// defined outside it).
public struct UnexpectedEndpointType: Error, Sendable, CustomStringConvertible {
    /// The type of what the connection was made to.
    public let typeName: String

    init(_ value: Any) {
        typeName = String(describing: type(of: value))
    }

    /// Names the unexpected type.
    public var description: String { "cannot connect to a \(typeName)" }
}
