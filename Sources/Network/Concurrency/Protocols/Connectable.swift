/// Something a ``NetworkConnection`` can be made to besides an ``NWEndpoint``: what a
/// ``NetworkBrowser`` finds (``Bonjour/Endpoint``).
public protocol Connectable: Sendable {}

/// A `Connectable` this module knows how to reach: the endpoint the connection is made to.
protocol ConnectableEndpoint: Connectable {
    var connectionEndpoint: NWEndpoint { get }
}
