/// Which side of a connection a framer runs on, as TLS it prepends
/// (`NWProtocolFramer.Instance.prependApplicationProtocol(options:)`) needs to know: the host
/// name a client verifies when its TLS options name no server, and whether it is a listener's
/// connection (the verify block then judges clients).
struct FramerConnectionSide: Sendable {
    let peerHostName: String?
    let listener: Bool
}
