import NIOCore

/// How a flow reaches the network.
enum FlowTransport {
    case none
    /// A socket the flow owns (outbound connections, accepted TCP children).
    case owned(Channel)
    /// A listener's datagram socket, shared with its other peers, with the peer's DTLS session
    /// if any. Boxed: only listener flows have one, and inline it would make every flow's
    /// transport field three times larger.
    case shared(SharedDatagramPeer)

    var channel: Channel? {
        switch self {
        case .none: return nil
        case .owned(let channel): return channel
        case .shared(let peer): return peer.channel
        }
    }

    /// A datagram listener's peer under DTLS.
    var isDTLSPeer: Bool {
        if case .shared(let peer) = self { return peer.dtls != nil }
        return false
    }

    /// The peer's address: the shared socket's peer, or what the owned socket knows.
    var remoteAddress: SocketAddress? {
        if case .shared(let peer) = self { return peer.remote }
        return channel?.remoteAddress
    }
}
