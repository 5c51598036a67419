import NIOCore
import NIOPosix
import NetworkSystem

extension ClientStackBuilder {
    /// A QUIC attempt: a connected UDP socket, then the QUIC handshake (TLS 1.3 inside it) with
    /// the flow's TLS settings; the flow above reads and writes one bidirectional stream, or the
    /// connection's datagrams.
    func connectQUIC(
        _ attempt: ConnectionAttempt, options: [SocketOptionSetting], local: SocketAddress?
    ) -> EventLoopFuture<Channel> {
        // QUIC without its TLS settings would be plain UDP: never (the facade always sets them).
        guard configuration.tls != nil else { return eventLoop.makeFailedFuture(FlowError.posix(EPROTONOSUPPORT)) }
        // Framers run above the connection's one stream (a group's run on each of its streams).
        let framed = configuration.carriesFramedMessages && !configuration.quic.multiplexed
        let bootstrap = datagramBootstrap(attempt, options: options) { channel, flow in
            if framed {
                try channel.pipeline.syncOperations.addHandler(FlowChannelHandler<FramedMessage, OwningFlowLink>(flow: flow))
            } else {
                try channel.pipeline.syncOperations.addHandler(FlowChannelHandler<ByteBuffer, OwningFlowLink>(flow: flow))
            }
        }
        let quic = configuration.quic
        let carriesDatagrams = configuration.transport == .quicDatagram
        // A group's streams that the peer opens are flows with the group's configuration.
        let streamConfiguration = configuration
        let connected = bindAndConnect(bootstrap, attempt: attempt, local: local, ownSocket: true)
        let secure = secured(connected, attempt: attempt) { channel, settings, hostName in
            QUICStack.startClient(
                // (A local address or an interface the parameters ask for stays.)
                on: channel, descriptor: attempt.descriptor, followsPaths: local == nil && interfaceIndex == nil, settings: settings, hostName: hostName, quic: quic,
                carriesDatagrams: carriesDatagrams, earlyData: initialData,
                // (The stream sends them, as 0-RTT data or after the handshake: Fast Open's rule.)
                tookEarlyData: { attempt.wroteInitialData = true }
            ) { stream in
                try Flow.adopting(accepted: stream, configuration: streamConfiguration, transport: .quic)
            }
        }
        return framed ? withFramers(secure, attempt: attempt, peer: nil) : secure
    }
}
