import NetworkCore

/// The HTTP CONNECT client handshake on what a proxy answers: interim heads, the final status
/// line and headers, and tunnel bytes after them.
enum HTTPConnectReplyFuzzBody {
    static func run(_ bytes: [UInt8]) {
        ProxyHandshakeReplay.compare(
            {
                try! HTTPConnectClientHandshake(
                    authority: "example.com:443", credential: ProxyCredential(username: "user", password: "secret"))
            }, on: bytes, what: "HTTP CONNECT")
    }
}
