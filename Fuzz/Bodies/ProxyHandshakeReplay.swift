import NIOCore
import NetworkCore

/// Drives a proxy handshake over bytes the way `ProxyTunnelHandler` does over a channel: each
/// write is followed by another look at what is already buffered, and bytes after the tunnel is
/// up belong to the layer above.
struct ProxyHandshakeReplay: Equatable {
    /// How the handshake ended.
    enum Outcome: Equatable {
        /// The tunnel is up; these bytes arrived after the proxy's answer.
        case established(leftover: [UInt8])
        /// The proxy cannot be used.
        case failed(ProxyError)
        /// The handshake wants more bytes.
        case waiting
    }

    var outcome = Outcome.waiting
    /// What the handshake sent, in order.
    var writes: [ByteBuffer] = []

    /// Runs `handshake` over `chunks`, each as one read.
    init<Handshake: ProxyHandshake>(_ handshake: Handshake, chunks: [[UInt8]]) {
        var handshake = handshake
        var inbound = ByteBuffer()
        var action = handshake.start()
        var remaining = chunks[...]
        while true {
            switch action {
            case .write(let bytes):
                writes.append(bytes)
                if inbound.readableBytes > 0 {
                    action = handshake.received(&inbound)
                    continue
                }
            case .waitForData:
                break
            case .established:
                let rest = remaining.flatMap { $0 }
                outcome = .established(leftover: Array(inbound.readableBytesView) + rest)
                return
            case .failed(let error):
                outcome = .failed(error)
                return
            }
            guard let next = remaining.popFirst() else { return }
            inbound.writeBytes(next)
            action = handshake.received(&inbound)
        }
    }

    /// Runs the handshake over the whole input at once and over it cut in pieces: a parser of a
    /// byte stream must come to the same end however the bytes were split.
    static func compare<Handshake: ProxyHandshake>(_ make: () -> Handshake, on bytes: [UInt8], what: String) {
        let whole = ProxyHandshakeReplay(make(), chunks: [bytes])
        let pieces = ProxyHandshakeReplay(make(), chunks: FuzzChunks.split(bytes))
        FuzzFailure.check(
            whole == pieces, "\(what) ends differently when the reply arrives in pieces: \(whole.outcome) vs \(pieces.outcome)")
    }
}
