/// Identifies a protocol, for example to ask a connection for that protocol's metadata.
///
/// Definitions compare equal when their names are equal. The class holds no mutable state; it
/// is `@unchecked Sendable` only because it is not final (framer definitions subclass it).
public class NWProtocolDefinition: CustomDebugStringConvertible, Equatable, @unchecked Sendable {

    /// The protocol's name, such as `tcp` or `tls`.
    public final let name: String

    /// Creates a definition with the given name.
    package init(name: String) {
        self.name = name
    }

    /// The protocol's name.
    public var debugDescription: String { name }

    /// Two definitions are equal when their names are equal.
    public static func == (lhs: NWProtocolDefinition, rhs: NWProtocolDefinition) -> Bool {
        lhs.name == rhs.name
    }
}
