#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS
import NIOCore

/// Stateless cookies for a DTLS listener (RFC 6347 §4.2.1): a ClientHello from an address the
/// listener has no flow for gets a HelloVerifyRequest, and only a ClientHello that returns the
/// cookie creates a flow. Spoofed source addresses therefore cost the listener nothing but one
/// small reply. Listener-confined (its event loop).
package final class DTLSCookies: @unchecked Sendable {
    /// What to do with a datagram from a new address.
    package enum Verdict {
        /// The ClientHello carries a valid cookie: make the peer's flow and session.
        case verified(gnutls_dtls_prestate_st)
        /// Send this HelloVerifyRequest back, and forget the datagram.
        case challenge(ByteBuffer)
        /// Not a ClientHello at all: drop it.
        case ignore
    }

    /// The secret cookies are made with; fresh per listener.
    private var key = gnutls_datum_t()

    /// A listener's cookie maker, with a fresh random secret.
    package init() throws(FlowError) {
        try GnuTLSCall.check(gnutls_key_generate(&key, 16))  // GNUTLS_COOKIE_KEY_SIZE
    }

    deinit {
        if let data = key.data { gnutls_memset(data, 0, Int(key.size)); free(data) }
    }

    /// Whether `datagram` from `remote` is a ClientHello with a valid cookie, one to answer with
    /// a HelloVerifyRequest, or something to drop.
    package func check(_ datagram: ByteBuffer, from remote: SocketAddress) -> Verdict {
        var client = Array("\(remote)".utf8)
        var prestate = gnutls_dtls_prestate_st()
        var message = Array(datagram.readableBytesView)
        let verified = client.withUnsafeMutableBytes { clientBytes in
            message.withUnsafeMutableBytes { messageBytes in
                gnutls_dtls_cookie_verify(
                    &key, clientBytes.baseAddress, clientBytes.count, messageBytes.baseAddress, messageBytes.count, &prestate)
            }
        }
        if verified >= 0 { return .verified(prestate) }
        // Only a handshake record (content type 22) deserves an answer.
        guard datagram.readableBytes > 13, datagram.getInteger(at: datagram.readerIndex, as: UInt8.self) == 22 else {
            return .ignore
        }
        let reply = ReplyBox()
        let sent = client.withUnsafeMutableBytes { clientBytes in
            withExtendedLifetime(reply) {
                gnutls_dtls_cookie_send(
                    &key, clientBytes.baseAddress, clientBytes.count, &prestate,
                    Unmanaged.passUnretained(reply).toOpaque(), cookieReplyPush)
            }
        }
        guard sent >= 0, reply.bytes.readableBytes > 0 else { return .ignore }
        return .challenge(reply.bytes)
    }

    /// Collects what GnuTLS writes for the HelloVerifyRequest.
    fileprivate final class ReplyBox {
        var bytes = ByteBuffer()
    }
}

private func cookieReplyPush(_ pointer: gnutls_transport_ptr_t?, _ data: UnsafeRawPointer?, _ size: Int) -> Int {
    guard let pointer, let data else { return -1 }
    let box = Unmanaged<DTLSCookies.ReplyBox>.fromOpaque(pointer).takeUnretainedValue()
    box.bytes.writeBytes(UnsafeRawBufferPointer(start: data, count: size))
    return size
}
