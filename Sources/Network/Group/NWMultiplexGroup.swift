/// A group made of the streams of one multiplexed connection (QUIC) to one peer: create an
/// ``NWConnectionGroup`` with it and QUIC parameters, then open streams with
/// ``NWConnection/init(from:to:using:)`` and take the peer's with
/// ``NWConnectionGroup/newConnectionHandler``.
public final class NWMultiplexGroup: NWGroupDescriptor, @unchecked Sendable {
    /// The peer the connection goes to.
    public let endpoint: NWEndpoint

    /// A group of streams to `endpoint`.
    public init(to endpoint: NWEndpoint) {
        self.endpoint = endpoint
    }

    /// The one peer, as a list.
    public var members: [NWEndpoint] { [endpoint] }
}
