#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS
import CNGTCP2
import NIOCore

/// A QUIC listener's stateless address validation (RFC 9000, 8.1.2) over ngtcp2's crypto
/// helpers: a client asked to retry gets a token sealed with this listener's secret, bound to
/// its address and its original connection ID; its next Initial carries the token back, which
/// proves it receives at that address. The C binding; `FlowListener+QUIC` decides when to ask.
package final class QUICRetry: Sendable {
    /// How long a token stays good: a client answers a Retry within a round trip.
    static let tokenLifetime: UInt64 = 10_000_000_000

    /// What to do with a datagram from a client the listener does not know yet.
    package enum Decision: Equatable {
        /// Start a server connection for this Initial.
        case accept(QUICInitial)
        /// Send this Retry packet back, and nothing else.
        case retry(ByteBuffer)
        /// Not an acceptable Initial, or a token that does not check out: drop it silently.
        case drop
    }

    private let secret: [UInt8]

    package init() throws(FlowError) {
        var secret = [UInt8](repeating: 0, count: 32)
        guard gnutls_rnd(GNUTLS_RND_KEY, &secret, secret.count) == 0 else { throw .posix(EIO) }
        self.secret = secret
    }

    /// Judges `datagram` from `remote`: a valid Retry token is accepted whatever the policy;
    /// without one, a client is sent a Retry when `requireAddressValidation`, which is only
    /// evaluated for an acceptable Initial (garbage costs no more than the parse).
    package func check(
        _ datagram: ByteBuffer, from remote: SocketAddress, requireAddressValidation: @autoclosure () -> Bool, now: UInt64
    ) -> Decision {
        datagram.withUnsafeReadableBytes { bytes -> Decision in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .drop }
            var header = ngtcp2_pkt_hd()
            guard ngtcp2_accept(&header, base, bytes.count) == 0 else { return .drop }
            let token = header.token.len > 0 && header.token.base != nil
                ? Array(UnsafeBufferPointer(start: header.token.base, count: header.token.len)) : []
            if token.first == UInt8(NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY) {
                return verify(token, header: header, from: remote, now: now)
            }
            guard requireAddressValidation() else {
                return .accept(QUICInitial(originalDestination: Self.bytes(of: header.dcid), clientSource: Self.bytes(of: header.scid)))
            }
            return retry(header, to: remote, now: now)
        }
    }

    private func verify(_ token: [UInt8], header: ngtcp2_pkt_hd, from remote: SocketAddress, now: UInt64) -> Decision {
        var original = ngtcp2_cid()
        var retrySource = header.dcid
        let status = remote.withSockAddr { address, length in
            ngtcp2_crypto_verify_retry_token(
                &original, token, token.count, secret, secret.count, header.version, address, ngtcp2_socklen(length),
                &retrySource, Self.tokenLifetime, now)
        }
        guard status == 0 else { return .drop }
        return .accept(QUICInitial(
            originalDestination: Self.bytes(of: original), clientSource: Self.bytes(of: header.scid),
            retrySource: Self.bytes(of: header.dcid), token: token))
    }

    private func retry(_ header: ngtcp2_pkt_hd, to remote: SocketAddress, now: UInt64) -> Decision {
        var retrySource = ngtcp2_cid()
        retrySource.datalen = 18
        let random = withUnsafeMutableBytes(of: &retrySource.data) { gnutls_rnd(GNUTLS_RND_NONCE, $0.baseAddress, 18) }
        guard random == 0 else { return .drop }
        var original = header.dcid
        var clientSource = header.scid
        var token = [UInt8](repeating: 0, count: 1 + 1 + Int(NGTCP2_MAX_CIDLEN) + 8 + 16 + Int(NGTCP2_CRYPTO_TOKEN_RAND_DATALEN))
        let tokenLength = remote.withSockAddr { address, length in
            ngtcp2_crypto_generate_retry_token(
                &token, secret, secret.count, header.version, address, ngtcp2_socklen(length), &retrySource, &original, now)
        }
        guard tokenLength > 0 else { return .drop }
        var packet = ByteBufferAllocator().buffer(capacity: 1_200)
        let written = packet.writeWithUnsafeMutableBytes(minimumWritableBytes: 1_200) { destination in
            max(0, ngtcp2_crypto_write_retry(
                destination.baseAddress!.assumingMemoryBound(to: UInt8.self), destination.count, header.version,
                &clientSource, &retrySource, &original, token, tokenLength))
        }
        return written > 0 ? .retry(packet) : .drop
    }

    static func bytes(of identifier: ngtcp2_cid) -> [UInt8] {
        withUnsafeBytes(of: identifier.data) { Array($0.prefix(min(identifier.datalen, Int(NGTCP2_MAX_CIDLEN)))) }
    }
}
