/// A protocol that carries whole messages (TLV, Coder, WebSocket, Framer, UDP): connections
/// whose top it is receive one message at a time and offer `messages`.
public protocol MessageProtocol: OneToOneProtocol {
    /// What one received message holds (`Data`, or the Coder's decoded type).
    associatedtype ContentType
    /// The classic API's metadata type for this protocol's messages.
    associatedtype LegacyMessage
}
