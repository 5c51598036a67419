/// A byte-stream protocol (TCP, TLS): connections whose top it is send and receive bytes, with
/// no message boundaries (`receive(exactly:)`, `receive(atLeast:atMost:)`, `receive(as:)`).
public protocol StreamProtocol: OneToOneProtocol {}
