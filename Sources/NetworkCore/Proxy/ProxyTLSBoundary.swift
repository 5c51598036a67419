import NIOCore

/// Marks where the TLS session with an HTTPS proxy ends in a pipeline. The handlers of the
/// connection's stack that come later (the CONNECT handshake, the destination's own TLS) go
/// right behind it, so they see the proxy session's plaintext; without a boundary they go at
/// the front. It passes everything on; only connections through an HTTPS proxy have one.
final class ProxyTLSBoundary: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
}

extension ChannelPipeline.SynchronousOperations {
    /// Adds a handler of the connection's stack: at the front, or behind an HTTPS proxy's TLS
    /// session when there is one (see `ProxyTLSBoundary`).
    func addStackHandler(_ handler: any ChannelHandler) throws {
        if let boundary = try? self.handler(type: ProxyTLSBoundary.self) {
            try addHandler(handler, position: .after(boundary))
        } else {
            try addHandler(handler, position: .first)
        }
    }
}
