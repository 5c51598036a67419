import NIOCore
import NIOPosix
import NetworkSystem

extension ClientStackBuilder {
    /// A QUIC attempt: a connected UDP socket, then the QUIC handshake (TLS 1.3 inside it) with
    /// the flow's TLS settings; the flow above reads and writes one bidirectional stream.
    func connectQUIC(
        _ attempt: ConnectionAttempt, options: [SocketOptionSetting], local: SocketAddress?
    ) -> EventLoopFuture<Channel> {
        guard let tls = configuration.tls else {
            // (The facade always gives QUIC its TLS settings.)
            return eventLoop.makeFailedFuture(FlowError.posix(EPROTONOSUPPORT))
        }
        let bootstrap = datagramBootstrap(attempt, options: options) { channel, flow in
            try channel.pipeline.syncOperations.addHandler(FlowChannelHandler<ByteBuffer, OwningFlowLink>(flow: flow))
        }
        let quic = configuration.quic
        let hostName = tls.serverName ?? configuration.target.hostName
        return bindAndConnect(bootstrap, attempt: attempt, local: local).flatMap { channel in
            handshake(tls, hostName: hostName, on: channel, attempt: attempt) { channel, settings, hostName in
                QUICStack.startClient(on: channel, settings: settings, hostName: hostName, quic: quic)
            }.map { channel }
        }
    }
}
