import NetworkCore

extension NWProtocolIP.Metadata {
    /// The IP metadata of a received datagram: its ECN codepoint and receive time, when the
    /// engine carried them with it (`ReceivedDatagramFacts`); none otherwise.
    static func received(_ message: (any AnyObject & Sendable)?) -> NWProtocolIP.Metadata {
        guard let facts = message as? ReceivedDatagramFacts else { return NWProtocolIP.Metadata() }
        return NWProtocolIP.Metadata(ecn: NWProtocolIP.ECN(codepoint: facts.ecn), receiveTime: facts.receiveTime)
    }
}

extension NWProtocolIP.ECN {
    /// The codepoint of the IP header's two ECN bits (RFC 3168).
    init(codepoint: UInt8) {
        switch codepoint & 3 {
        case 1: self = .ect1
        case 2: self = .ect0
        case 3: self = .ce
        default: self = .nonECT
        }
    }

    /// The two ECN bits of the IP header for this codepoint.
    var codepoint: UInt8 {
        switch self {
        case .nonECT: 0
        case .ect1: 1
        case .ect0: 2
        case .ce: 3
        }
    }
}
