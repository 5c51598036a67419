/// A protocol that can be the top of an ordinary (not multiplexed) connection: every stream,
/// message and datagram protocol.
public protocol OneToOneProtocol: NetworkProtocolOptions {}
