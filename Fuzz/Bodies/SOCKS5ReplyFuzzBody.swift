import NetworkCore

/// The SOCKS5 client handshake on what a proxy sends: method choice, user/password status and
/// the CONNECT reply, as one stream. A credential is offered so both the no-auth and the RFC
/// 1929 paths are reachable.
enum SOCKS5ReplyFuzzBody {
    static func run(_ bytes: [UInt8]) {
        ProxyHandshakeReplay.compare(
            {
                try! SOCKS5ClientHandshake(
                    destination: .domain("example.com"), port: 443,
                    credential: ProxyCredential(username: "user", password: "secret"))
            }, on: bytes, what: "SOCKS5")
    }
}
