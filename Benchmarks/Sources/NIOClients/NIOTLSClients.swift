// The TLS scenarios on plain SwiftNIO + swift-nio-ssl: `NIOSSLClientHandler` first in a
// `ClientBootstrap` pipeline, one `NIOSSLContext` for every connection of a run. They talk to the
// C TLS server (C/tls_server.c) on PORT+300.
import BenchSupport
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// The client context every NIOSSL connection of a run shares: TLS 1.2 or newer, no certificate
/// verification (the server's certificate is a throwaway self-signed one; the C and Network
/// clients skip verification too).
public func makeNIOSSLClientContext() throws -> NIOSSLContext {
    var configuration = TLSConfiguration.makeClientConfiguration()
    configuration.minimumTLSVersion = .tlsv12
    configuration.certificateVerification = .none
    return try NIOSSLContext(configuration: configuration)
}

/// Completes `promise` when the TLS handshake is done (or failed), then passes everything on.
final class HandshakeDoneHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var promise: EventLoopPromise<Void>?

    init(promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = event as? TLSUserEvent, case .handshakeCompleted = tls {
            self.promise?.succeed(())
            self.promise = nil
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let promise = self.promise {
            self.promise = nil
            promise.fail(error)
            context.close(promise: nil)
            return
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.promise?.fail(ChannelError.eof)
        self.promise = nil
        context.fireChannelInactive()
    }
}

// MARK: - TLS bulk

/// One TLS connection to the TLS sink: after the handshake, `chunkSize`-byte writes for
/// `duration` seconds, then the 0x00 end marker; the result is what the sink counted, over the
/// time from the first write until its count arrived.
public func nioTLSBulk(
    group: EventLoopGroup, context: NIOSSLContext, host: String, port: Int, chunkSize: Int, duration: Double
) throws -> BulkResult {
    let eventLoop = group.next()
    let handshake = eventLoop.makePromise(of: Void.self)
    let channel = try ClientBootstrap(group: eventLoop)
        .channelOption(.tcpOption(.tcp_nodelay), value: 1)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let sync = channel.pipeline.syncOperations
                try sync.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                try sync.addHandler(HandshakeDoneHandler(promise: handshake))
                try sync.addHandler(BulkHandler(chunkSize: chunkSize, endMarker: true))
            }
        }
        .connect(host: host, port: port).wait()
    try handshake.futureResult.wait()
    return try measureBulk(channel: channel, duration: duration)
}

// MARK: - TLS handshakes

/// Sequential handshakes: connect, TLS handshake, and once it completes `close()` (NIOSSL sends
/// close_notify; the close finishes in the background) and connect the next. The bootstrap is on
/// the group, so (as with the other NIO clients here and as Network does) consecutive connections
/// take the group's event loops in turn; `--threads 1` keeps them on one loop.
public final class NIOTLSHandshakeClient: Sendable {
    let group: EventLoopGroup
    let context: NIOSSLContext
    let host: String
    let port: Int

    public init(group: EventLoopGroup, context: NIOSSLContext, host: String, port: Int) {
        self.group = group
        self.context = context
        self.host = host
        self.port = port
    }

    public func start(_ control: RunControl) {
        self.group.next().execute { self.next(control) }
    }

    private func next(_ control: RunControl) {
        let eventLoop = self.group.next()
        let handshake = eventLoop.makePromise(of: Void.self)
        let context = self.context
        let connect = ClientBootstrap(group: eventLoop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
                    try sync.addHandler(HandshakeDoneHandler(promise: handshake))
                }
            }
            .connect(host: self.host, port: self.port)
        connect.whenFailure { error in
            handshake.fail(error)
        }
        handshake.futureResult.whenComplete { result in
            switch result {
            case .success:
                connect.whenSuccess { $0.close(promise: nil) }
                if control.completed() {
                    self.next(control)
                } else {
                    control.connectionStopped()
                }
            case .failure(let error):
                fputsStderr("tls-handshake: \(error)\n")
                control.error()
                connect.whenSuccess { $0.close(promise: nil) }
                control.connectionStopped()
            }
        }
    }
}
