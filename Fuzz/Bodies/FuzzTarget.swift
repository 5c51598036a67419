/// The parsers of network input that have a fuzz target. The raw value is the target's name, as
/// `NETWORK_FUZZ_TARGET` gives it to the `fuzz-network` executable; its seed corpus is
/// `Fuzz/Corpus/<name>`.
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// DNS messages (UDP payloads).
    case dnsMessage = "dns-message"
    /// DNS over TCP: length-prefixed messages in a byte stream.
    case dnsStream = "dns-stream"
    /// What a SOCKS5 proxy sends the client.
    case socks5Reply = "socks5-reply"
    /// What an HTTP proxy answers to CONNECT.
    case httpConnectReply = "http-connect-reply"
    /// A PAC script's `FindProxyForURL` answer.
    case pacResult = "pac-result"
    /// The first datagram from a new peer of a DTLS listener.
    case dtlsCookie = "dtls-cookie"
    /// A framed byte stream through the framer host's input side (`FramerInput`).
    case framerInput = "framer-input"
    /// The built-in TLV framer's input (`TLVFramer`, UInt32 type and length).
    case tlvInput = "tlv-input"
    /// The Coder's stream framing (`TLVFramer` with a UInt32 length prefix).
    case coderStream = "coder-stream"
    /// What a WebSocket server sends after the upgrade: frames into whole messages.
    case webSocketFrames = "websocket-frames"
    /// A DNS-SD TXT record's key/value strings (what a Bonjour service advertises).
    case txtRecord = "txt-record"
    /// An mDNS datagram from the link, through the responder's and querier's value types.
    case mdnsInput = "mdns-input"
    /// What a QUIC server sends a client: its datagrams into ngtcp2 and GnuTLS.
    case quicInput = "quic-input"
    /// What a QUIC client sends a listener's connection: its datagrams into ngtcp2 and GnuTLS.
    case quicServerInput = "quic-server-input"

    /// Runs the target's body on one input. It returns normally for every input; a crash, a
    /// hang or a broken invariant (`FuzzFailure`) is a finding.
    package func run(_ bytes: [UInt8]) {
        switch self {
        case .dnsMessage: DNSMessageFuzzBody.run(bytes)
        case .dnsStream: DNSStreamFuzzBody.run(bytes)
        case .socks5Reply: SOCKS5ReplyFuzzBody.run(bytes)
        case .httpConnectReply: HTTPConnectReplyFuzzBody.run(bytes)
        case .pacResult: PACResultFuzzBody.run(bytes)
        case .dtlsCookie: DTLSCookieFuzzBody.run(bytes)
        case .framerInput: FramerInputFuzzBody.run(bytes)
        case .tlvInput: TLVFramerFuzzBody.run(bytes, layout: .tlv)
        case .coderStream: TLVFramerFuzzBody.run(bytes, layout: .lengthPrefixed)
        case .webSocketFrames: WebSocketFramesFuzzBody.run(bytes)
        case .txtRecord: TXTRecordFuzzBody.run(bytes)
        case .mdnsInput: MDNSInputFuzzBody.run(bytes)
        case .quicInput: QUICInputFuzzBody.run(bytes)
        case .quicServerInput: QUICServerInputFuzzBody.run(bytes)
        }
    }

    /// `run` on libFuzzer's buffer.
    package func run(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    }
}
