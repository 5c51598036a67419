/// A protocol whose connections carry many streams (QUIC): such a connection opens and accepts
/// streams instead of sending and receiving itself.
public protocol MultiplexProtocol: NetworkProtocolOptions {}
