// The TLS scenarios on our Network module: `NWConnection(host:port:using: NWParameters(tls:tcp:))`
// with Apple's sec_protocol_options API. They talk to the C TLS server (C/tls_server.c) on
// PORT+300.
import BenchSupport
import Dispatch
import Foundation
import Network

/// TLS over TCP (TCP_NODELAY), TLS 1.2 or newer (the default). The server's certificate is a
/// throwaway self-signed one: by default the client does not authenticate it
/// (`sec_protocol_options_set_peer_authentication_required(false)`, as NIOSSL's
/// `certificateVerification = .none` and the C client's SSL_VERIFY_NONE); `verifyBlock` instead
/// accepts it in a verify block (Apple's documented way to trust a private certificate), which
/// costs a hop to `verifyQueue` per handshake.
public func tlsParameters(verifyBlock: Bool, verifyQueue: DispatchQueue) -> NWParameters {
    let tls = NWProtocolTLS.Options()
    if verifyBlock {
        sec_protocol_options_set_verify_block(
            tls.securityProtocolOptions, { _, _, complete in complete(true) }, verifyQueue)
    } else {
        sec_protocol_options_set_peer_authentication_required(tls.securityProtocolOptions, false)
    }
    let tcp = NWProtocolTCP.Options()
    tcp.noDelay = true
    return NWParameters(tls: tls, tcp: tcp)
}

/// One TLS connection to the TLS sink, the same driver as the TCP bulk client (`nwBulk`: one
/// 64 KiB send in flight, the next from its `.contentProcessed` completion), ended by the 0x00
/// marker. The clock starts after `.ready`, i.e. after the handshake.
public func nwTLSBulk(host: String, port: Int, chunkSize: Int, duration: Double, window: Int, verifyBlock: Bool) -> NWBulkResult {
    let parameters = tlsParameters(verifyBlock: verifyBlock, verifyQueue: DispatchQueue(label: "bench.verify"))
    return nwBulk(
        host: host, port: port, chunkSize: chunkSize, duration: duration, window: window,
        parameters: parameters, endMarker: true)
}

/// Sequential handshakes: a new `NWConnection` is started, and when it reports `.ready` (TCP
/// connected and TLS handshake done) it is cancelled and the next one is started, from the same
/// state handler on one serial queue.
public final class NWTLSHandshakeClient: Sendable {
    let queue = DispatchQueue(label: "bench.tls-handshake")
    let host: NWEndpoint.Host
    let port: NWEndpoint.Port
    let makeParameters: @Sendable (DispatchQueue) -> NWParameters
    let shared: NWParameters?

    /// `sharedParameters`: one `NWParameters` for every connection; otherwise each connection gets
    /// its own, as code that builds its parameters where it connects does.
    public convenience init(host: String, port: Int, verifyBlock: Bool, sharedParameters: Bool) {
        self.init(host: host, port: port, sharedParameters: sharedParameters) { queue in
            tlsParameters(verifyBlock: verifyBlock, verifyQueue: queue)
        }
    }

    /// Handshakes with the parameters `makeParameters` makes (given the client's queue, for
    /// verify blocks): QUIC's, for example.
    public init(host: String, port: Int, sharedParameters: Bool, makeParameters: @escaping @Sendable (DispatchQueue) -> NWParameters) {
        (self.host, self.port) = endpoint(host, port)
        self.makeParameters = makeParameters
        self.shared = sharedParameters ? makeParameters(self.queue) : nil
    }

    public func start(_ control: RunControl) {
        self.queue.async { self.next(control) }
    }

    private func next(_ control: RunControl) {
        let parameters = self.shared ?? self.makeParameters(self.queue)
        let connection = NWConnection(host: self.host, port: self.port, using: parameters)
        connection.stateUpdateHandler = { state in
            switch state {
            case .ready:
                connection.cancel()
                if control.completed() {
                    self.next(control)
                } else {
                    control.connectionStopped()
                }
            case .failed(let error), .waiting(let error):
                fputsStderr("tls-handshake: \(state): \(error)\n")
                control.error()
                connection.cancel()
                control.connectionStopped()
            default:
                break
            }
        }
        connection.start(queue: self.queue)
    }
}
