#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOSSL

/// Runs the TLS a framer prepended (`prependApplicationProtocol`, `FramerHost.prependedTLS`)
/// above that framer, once the framer is ready: STARTTLS, or a proxy handshake the framer speaks
/// before TLS to the real server. The pipeline becomes
/// `framer → FramerStreamWriter → TLS → StreamAboveFramers → flow's handler`: the framer's
/// messages go up as bytes into TLS, TLS's records go down as messages into the framer, and the
/// flow reads the decrypted bytes as a stream.
enum TLSAboveFramer {
    /// The TLS the top framer of `hosts` (bottom first) prepended, if any; a framer below the
    /// top one cannot have TLS above it alone (`EOPNOTSUPP`).
    static func prepended(by hosts: [FramerHost]) throws(FlowError) -> FlowTLSConfiguration? {
        if hosts.dropLast().contains(where: { $0.prependedTLS != nil }) { throw .posix(EOPNOTSUPP) }
        return hosts.last?.prependedTLS
    }

    /// Puts the adapters between `top` and the flow's handler and returns the one TLS goes right
    /// below.
    private static func insertAdapters<Link: FlowLink>(
        on channel: Channel, top: FramerHandler, flowHandler: FlowChannelHandler<FramedMessage, Link>
    ) throws -> StreamAboveFramers {
        let pipeline = channel.pipeline.syncOperations
        top.carryByteStreamAbove()
        flowHandler.leaveMessageLayer()
        let reader = StreamAboveFramers()
        try pipeline.addHandler(FramerStreamWriter(), position: .before(flowHandler))
        try pipeline.addHandler(reader, position: .before(flowHandler))
        return reader
    }

    /// An outbound connection's TLS above `top`; completes with the session after the handshake
    /// and the server's verification (as for TLS over TCP).
    static func startClient(
        on channel: Channel, top: FramerHandler, flowHandler: FlowChannelHandler<FramedMessage, OwningFlowLink>,
        settings: FlowTLSConfiguration, hostName: String?, peer: SocketAddress?
    ) -> EventLoopFuture<TLSSessionFacts> {
        do {
            let reader = try insertAdapters(on: channel, top: top, flowHandler: flowHandler)
            if DTLSStack.usesGnuTLSForStream(settings) {
                return DTLSStack.startClient(ByteBuffer.self, on: channel, settings: settings, hostName: hostName, before: reader)
            }
            return TLSStack.startClient(on: channel, settings: settings, hostName: hostName, peer: peer, before: reader)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    /// An accepted connection's TLS above `top`; completes with the session after the handshake
    /// (its errors as the handshake's, for `FlowError(tls:verifyBlock:)`).
    static func startServer(
        on channel: Channel, top: FramerHandler, flowHandler: FlowChannelHandler<FramedMessage, WeakFlowLink>,
        settings: FlowTLSConfiguration
    ) -> EventLoopFuture<TLSSessionFacts> {
        do {
            let reader = try insertAdapters(on: channel, top: top, flowHandler: flowHandler)
            if DTLSStack.usesGnuTLSForStream(settings) {
                let handshake = channel.eventLoop.makePromise(of: TLSSessionFacts.self)
                let handler = GnuTLSStreamHandler(role: .server, settings: settings, handshake: handshake)
                try channel.pipeline.syncOperations.addHandler(handler, position: .before(reader))
                return handler.handshakeFuture
            }
            let context = try TLSStack.serverContext(settings)
            let handler = try TLSStack.addServerHandler(to: channel, context: context, settings: settings, before: reader)
            return TLSStack.waitForServerHandshake(handler, on: channel)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }
}
