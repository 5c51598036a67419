import CGnuTLS
import Logging
import NetworkDNS

/// Checking the peer once the handshake is done (certificate chain, host name, or the
/// application's verify block) and what the session negotiated.
extension GnuTLSSession {
    func verifyPeer() {
        let chain = peerCertificates()
        switch GnuTLSSessionQueries.checkPeer(session, chain: chain, settings: settings, isClient: role != .server, serverName: serverName) {
        case .trusted:
            finishHandshake(.success(sessionFacts(chain)))
        case .askVerifyBlock:
            let loop = eventLoop
            settings.verify?(chain) { [weak self] trusted in
                guard let self else { return }
                loop.execute { self.verified(trusted, chain: chain) }
            }
        case .refused(let status, let detail):
            NetworkLog.tls.debug("peer certificate refused: \(detail)")
            reject(status)
        }
    }

    func verified(_ trusted: Bool, chain: [[UInt8]]) {
        guard phase == .verifying else { return }
        NetworkLog.tls.debug("verify block says \(trusted ? "trusted" : "not trusted")")
        if trusted {
            finishHandshake(.success(sessionFacts(chain)))
        } else {
            reject(TLSStatus.badCertificate)
        }
    }

    /// Tells the peer its certificate was refused, then fails.
    func reject(_ status: Int32) {
        _ = gnutls_alert_send(session, GNUTLS_AL_FATAL, GNUTLS_A_BAD_CERTIFICATE)
        flush()
        finishHandshake(.failure(.tls(status)))
    }

    func peerCertificates() -> [[UInt8]] {
        GnuTLSSessionQueries.peerCertificates(session)
    }

    func sessionFacts(_ chain: [[UInt8]]) -> TLSSessionFacts {
        GnuTLSSessionQueries.facts(session, chain: chain, serverName: serverName)
    }

    /// The name a client checks the server's certificate for (nil on a server).
    var serverName: String? {
        guard case .client(let name) = role else { return nil }
        return name
    }
}
