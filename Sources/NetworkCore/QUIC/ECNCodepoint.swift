#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// ECN codepoints (RFC 3168: the two low bits of the IP header's TOS / traffic class) as ngtcp2
/// takes and gives them, and as NIO reports and sets them per datagram.
enum ECNCodepoint {
    /// The codepoint of a datagram NIO read (nil metadata: ECN not read, not ECN-capable).
    static func codepoint(_ state: NIOExplicitCongestionNotificationState?) -> UInt8 {
        switch state {
        case .transportCapableFlag0: 2
        case .transportCapableFlag1: 1
        case .congestionExperienced: 3
        case .transportNotCapable, nil: 0
        }
    }

    /// The state NIO writes for `codepoint`.
    static func state(_ codepoint: UInt8) -> NIOExplicitCongestionNotificationState {
        switch codepoint & 3 {
        case 2: .transportCapableFlag0
        case 1: .transportCapableFlag1
        case 3: .congestionExperienced
        default: .transportNotCapable
        }
    }

    /// What a plain datagram is written with so that it leaves with `codepoint` (a per-datagram
    /// control message); nil for 0, which leaves the IP header as the socket has it.
    static func writeMetadata(_ codepoint: UInt8) -> AddressedEnvelope<ByteBuffer>.Metadata? {
        codepoint == 0 ? nil : AddressedEnvelope<ByteBuffer>.Metadata(ecnState: state(codepoint))
    }

    /// Asks the kernel for each datagram's codepoint on `channel`: NIO's option reads
    /// `IPV6_TCLASS` on an IPv6 socket, which IPv4 datagrams reaching a dual-stack socket do not
    /// carry; their TOS comes with `IP_RECVTOS`, set here too whatever the family (the socket
    /// may not be bound yet; NIO reads either message).
    static func enableReading(on channel: Channel) {
        guard let options = channel.syncOptions else { return }
        try? options.setOption(ChannelOptions.explicitCongestionNotification, value: true)
        try? options.setOption(
            ChannelOptions.Types.SocketOption(level: SocketOptionLevel(IPPROTO_IP), name: IP_RECVTOS), value: 1)
    }
}
