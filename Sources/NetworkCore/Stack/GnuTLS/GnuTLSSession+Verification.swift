import CGnuTLS
import Logging
import NetworkDNS

/// Checking the peer once the handshake is done (certificate chain, host name, or the
/// application's verify block) and what the session negotiated.
extension GnuTLSSession {
    func verifyPeer() {
        let chain = peerCertificates()
        let isClient = role != .server
        let authenticatesPeer = isClient
            ? settings.peerAuthenticationRequired != false
            : settings.peerAuthenticationRequired == true
        // A PSK session authenticates both sides with the key; there is no certificate.
        let usedPSK = chain.isEmpty && !settings.preSharedKeys.isEmpty
        if !authenticatesPeer || usedPSK {
            finishHandshake(.success(sessionFacts(chain)))
            return
        }
        if let verify = settings.verify {
            let loop = eventLoop
            verify(chain) { [weak self] trusted in
                guard let self else { return }
                loop.execute { self.verified(trusted, chain: chain) }
            }
            return
        }
        var status: UInt32 = 0
        let checked: Int32
        if case .client(let serverName) = role, let serverName {
            checked = gnutls_certificate_verify_peers3(session, serverName, &status)
        } else {
            checked = gnutls_certificate_verify_peers3(session, nil, &status)
        }
        if checked < 0 || chain.isEmpty {
            NetworkLog.tls.debug("peer not verified: \(chain.isEmpty ? "no certificate presented" : "verification error \(checked)")")
            reject(TLSStatus.certificateChainInvalid)
        } else if status != 0 {
            NetworkLog.tls.debug("peer certificate refused: GnuTLS verification status 0x\(String(status, radix: 16))")
            reject(GnuTLSErrors.statusForVerification(status))
        } else {
            finishHandshake(.success(sessionFacts(chain)))
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
        var serverName: String?
        if case .client(let name) = role { serverName = name }
        return GnuTLSSessionQueries.facts(session, chain: chain, serverName: serverName)
    }
}
