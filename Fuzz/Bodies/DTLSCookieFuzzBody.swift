import NIOCore
import NetworkCore

/// The DTLS listener's stateless cookie check (GnuTLS's prestate parser) on the first datagram
/// from a new address. When it answers with a HelloVerifyRequest, the same ClientHello is sent
/// again carrying that cookie, as a real client would, so the verifying path runs too.
enum DTLSCookieFuzzBody {
    /// One secret for the whole run: cookies made for one input verify on the next.
    private static let cookies = try! DTLSCookies()
    private static let peer = try! SocketAddress(ipAddress: "192.0.2.1", port: 4433)

    static func run(_ bytes: [UInt8]) {
        guard case .challenge(let reply) = cookies.check(ByteBuffer(bytes: bytes), from: peer) else { return }
        let request = Array(reply.readableBytesView)
        // Record header (13) + handshake header (12) + version (2) + cookie length (1).
        FuzzFailure.check(request.count > 28 && request[0] == 22 && request[13] == 3, "challenge is not a HelloVerifyRequest")
        let cookie = Array(request[28..<min(request.count, 28 + Int(request[27]))])
        guard let again = DTLSClientHello.withCookie(cookie, in: bytes) else { return }
        _ = cookies.check(ByteBuffer(bytes: again), from: peer)
    }
}
