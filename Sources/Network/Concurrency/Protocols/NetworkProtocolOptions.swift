/// A layer of a protocol stack in the structured-concurrency API (`TLS`, `TCP`, `TLV`, ...).
///
/// Stacks are written top down in a ``ProtocolStackBuilder`` closure; the protocol at the top
/// decides which sends and receives a connection offers (its category: ``StreamProtocol``,
/// ``MessageProtocol``, ``DatagramProtocol``). Every layer is a value whose modifiers return a
/// changed copy. (Layers are values shared with the tasks a connection runs: `Sendable`.)
public protocol NetworkProtocolOptions: Sendable {
    /// The layer this one runs over when none is written (TLS over TCP, TCP over IP).
    associatedtype BelowProtocol
    /// What a received message carries besides its content.
    associatedtype Metadata: NetworkMetadataProtocol
    /// Extra state kept per connection for this layer.
    associatedtype ProtocolStorage: ConnectionStorage = DefaultProtocolStorage
    /// A received value together with this layer's metadata.
    typealias Message<T> = (content: T, metadata: Self.Metadata)
}
