import NIOHTTP1

/// What both ends read from the other's upgrade headers (RFC 6455 §4): the header checks and the
/// subprotocol list, written once for the client's and the server's handshake.
enum WebSocketUpgradeHeaders {
    /// The names of the headers the handshake itself uses (not reported as additional ones).
    static let handshakeHeaderNames: Set<String> = [
        "upgrade", "connection", "sec-websocket-key", "sec-websocket-accept", "sec-websocket-version",
        "sec-websocket-protocol", "sec-websocket-extensions", "host",
    ]

    /// Whether `headers` carry `Upgrade: websocket` and a `Connection` that names `upgrade`
    /// (both compared without case, `Connection` as a comma-separated list).
    static func asksForUpgrade(_ headers: HTTPHeaders) -> Bool {
        let upgrade = headers[canonicalForm: "upgrade"].map { $0.lowercased() }
        let connection = headers[canonicalForm: "connection"].map { $0.lowercased() }
        return upgrade.contains("websocket") && connection.contains("upgrade")
    }

    /// The subprotocols listed in `Sec-WebSocket-Protocol` headers, in order.
    static func subprotocols(_ headers: HTTPHeaders) -> [String] {
        headers[canonicalForm: "sec-websocket-protocol"].map(String.init).filter { !$0.isEmpty }
    }

    /// The headers other than the handshake's own, as the application sees them.
    static func additional(_ headers: HTTPHeaders) -> [(name: String, value: String)] {
        headers.filter { !handshakeHeaderNames.contains($0.name.lowercased()) }.map { (name: $0.name, value: $0.value) }
    }
}
