/// A protocol of unreliable datagrams (UDP): each send is one datagram, each receive one
/// datagram.
public protocol DatagramProtocol: MessageProtocol {}
