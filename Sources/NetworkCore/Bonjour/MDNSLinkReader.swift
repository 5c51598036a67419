import NIOCore
import NetworkDNS
import NetworkSystem

/// The last handler of an mDNS socket's channel: hands each datagram to its link. Reads happen
/// on the engine's loop, where the link lives.
final class MDNSLinkReader: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let link: MDNSLink
    private let family: SocketFamily

    init(link: MDNSLink, family: SocketFamily) {
        self.link = link
        self.family = family
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = Self.unwrapInboundIn(data)
        link.received(Array(envelope.data.readableBytesView), from: envelope.remoteAddress, family: family)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A datagram socket reports ICMP errors of earlier sends here; nothing to do but go on.
        NetworkLog.bonjour.trace("mDNS socket error", metadata: ["interface": "\(link.interface.name)", "error": "\(error)"])
    }
}
