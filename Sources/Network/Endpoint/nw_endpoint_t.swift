import Foundation

/// The C-level endpoint object carried by ``NWEndpoint/opaque(_:)``.
///
/// On Apple platforms this is the Network framework's C endpoint type. Linux has no C layer, so
/// it is a small reference type here: an endpoint the Swift enum cannot express directly, with a
/// description and, when there is one, the plain endpoint it stands for. Equality and hashing are
/// by identity, as for the C objects.
public final class nw_endpoint_t: CustomDebugStringConvertible, Hashable, Sendable {

    /// A human-readable description of the endpoint.
    package let endpointDescription: String

    /// The plain endpoint this opaque one stands for, if it has one.
    package let underlyingEndpoint: NWEndpoint?

    /// Creates an opaque endpoint.
    package init(description: String, underlyingEndpoint: NWEndpoint? = nil) {
        self.endpointDescription = description
        self.underlyingEndpoint = underlyingEndpoint
    }

    /// The endpoint's description.
    public var debugDescription: String { endpointDescription }

    /// Opaque endpoints are equal only to themselves.
    public static func == (lhs: nw_endpoint_t, rhs: nw_endpoint_t) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
