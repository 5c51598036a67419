import NetworkCore

/// How a send's IP metadata (`NWProtocolIP.Metadata`) marks its datagram, in the engine's terms:
/// the ECN codepoint (0 for none), and the service class whose DSCP it carries instead of the
/// parameters' (nil: theirs; a metadata's best effort is its default, so it leaves theirs). Where
/// the engine applies them: docs/data-path.md. The same for `NWConnection`, `NWConnectionGroup`
/// and `NetworkConnection` sends.
struct DatagramMarking {
    let ecn: UInt8
    let trafficClass: TrafficClass?

    /// No marking of its own: the parameters' service class, no ECN codepoint.
    static let unmarked = DatagramMarking(ip: nil)

    /// The marking `ip` asks for; unmarked without one.
    init(ip: NWProtocolIP.Metadata?) {
        guard let ip else {
            ecn = 0
            trafficClass = nil
            return
        }
        ecn = ip.ecn.codepoint
        trafficClass = ip.serviceClass == .bestEffort ? nil : ip.serviceClass.trafficClass
    }

    /// The marking of the first IP metadata among `metadata` (a 2025 send's `metadata:` builder).
    init(_ metadata: [NWProtocolMetadata]) {
        self.init(ip: metadata.lazy.compactMap { $0 as? NWProtocolIP.Metadata }.first)
    }
}
