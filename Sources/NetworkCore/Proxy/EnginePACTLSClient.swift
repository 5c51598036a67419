import NIOCore
import NetworkPAC

/// The engine's TLS stack offered to PAC fetches: `https://` scripts are verified like every TLS
/// connection of this package (system trust store and the URL's host name by default).
struct EnginePACTLSClient: PACTLSClient {
    /// The TLS settings of the fetch; tests pin a certificate through `verify`.
    var settings: FlowTLSConfiguration

    /// A client with `settings` (the defaults unless given).
    init(settings: FlowTLSConfiguration = FlowTLSConfiguration()) {
        self.settings = settings
    }

    /// Runs the handshake with `TLSStack`; a failure comes back as the `FlowError` a connection
    /// would report, so the load's message reads the same as a connection's.
    func startClient(on channel: any Channel, hostName: String) -> EventLoopFuture<Void> {
        let verifyBlock = settings.verify != nil
        return TLSStack.startClient(on: channel, settings: settings, hostName: hostName, peer: channel.remoteAddress)
            .flatMapErrorThrowing { error in throw FlowError(tls: error, verifyBlock: verifyBlock) }
            .map { _ in }
    }
}
