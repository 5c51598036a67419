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
        var count: UInt32 = 0
        guard let list = gnutls_certificate_get_peers(session, &count) else { return [] }
        return (0..<Int(count)).map { GnuTLSCall.bytes(list[$0]) }
    }

    func sessionFacts(_ chain: [[UInt8]]) -> TLSSessionFacts {
        var alpn = gnutls_datum_t()
        let negotiated: String? = gnutls_alpn_get_selected_protocol(session, &alpn) == 0
            ? String(decoding: GnuTLSCall.bytes(alpn), as: UTF8.self) : nil
        let version: UInt16?
        switch gnutls_protocol_get_version(session) {
        case GNUTLS_DTLS1_2: version = 0xfefd
        case GNUTLS_DTLS1_0: version = 0xfeff
        case GNUTLS_TLS1_2: version = 0x0303
        case GNUTLS_TLS1_3: version = 0x0304
        default: version = nil
        }
        var serverName: String?
        if case .client(let name) = role { serverName = name }
        return TLSSessionFacts(
            negotiatedProtocol: negotiated, version: version, peerCertificates: chain, serverName: serverName,
            cipherSuite: negotiatedSuite())
    }

    /// The IANA number of the negotiated suite (GnuTLS names suites by their parts).
    func negotiatedSuite() -> UInt16? {
        let exchange = gnutls_kx_get(session)
        let cipher = gnutls_cipher_get(session)
        let mac = gnutls_mac_get(session)
        var index = 0
        var identifier: (UInt8, UInt8) = (0, 0)
        var candidateExchange = GNUTLS_KX_UNKNOWN
        var candidateCipher = GNUTLS_CIPHER_UNKNOWN
        var candidateMAC = GNUTLS_MAC_UNKNOWN
        while withUnsafeMutablePointer(to: &identifier, { pointer in
            pointer.withMemoryRebound(to: UInt8.self, capacity: 2) { bytes in
                gnutls_cipher_suite_info(index, bytes, &candidateExchange, &candidateCipher, &candidateMAC, nil)
            }
        }) != nil {
            if candidateExchange == exchange && candidateCipher == cipher && candidateMAC == mac {
                return UInt16(identifier.0) << 8 | UInt16(identifier.1)
            }
            index += 1
        }
        return nil
    }
}
