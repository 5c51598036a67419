import CGnuTLS
import NIOCore

/// What any GnuTLS session (DTLS, TLS over a stream, or the TLS inside QUIC) is asked after its
/// handshake, and the ALPN list it is given before: plain functions of the session handle, so
/// every owner of a session shares them.
enum GnuTLSSessionQueries {
    /// The peer's certificate chain (DER), leaf first; empty when it presented none.
    static func peerCertificates(_ session: gnutls_session_t?) -> [[UInt8]] {
        var count: UInt32 = 0
        guard let list = gnutls_certificate_get_peers(session, &count) else { return [] }
        return (0..<Int(count)).map { GnuTLSCall.bytes(list[$0]) }
    }

    /// What checking the peer after a handshake concluded.
    enum PeerVerdict: Equatable {
        case trusted
        /// The settings' verify block decides (asynchronously).
        case askVerifyBlock
        /// Refused with this TLS status; `detail` says why, for the debug log.
        case refused(Int32, detail: String)
    }

    /// Checks the peer of a finished handshake the way the settings ask: not at all (peer
    /// authentication off, or a PSK session, which the key authenticates), by the verify
    /// block, or against the system trust store and `serverName`.
    static func checkPeer(
        _ session: gnutls_session_t?, chain: [[UInt8]], settings: FlowTLSConfiguration, isClient: Bool, serverName: String?
    ) -> PeerVerdict {
        // (A server that asked for a certificate without requiring one checks it when it came.)
        let authenticatesPeer = isClient
            ? settings.peerAuthenticationRequired != false
            : settings.peerAuthenticationRequired == true || (settings.asksOptionalClientCertificate && !chain.isEmpty)
        // A PSK session authenticates both sides with the key; there is no certificate.
        let usedPSK = chain.isEmpty && !settings.preSharedKeys.isEmpty
        if !authenticatesPeer || usedPSK { return .trusted }
        if settings.verify != nil { return .askVerifyBlock }
        var status: UInt32 = 0
        let checked = gnutls_certificate_verify_peers3(session, serverName, &status)
        if checked < 0 || chain.isEmpty {
            return .refused(
                TLSStatus.certificateChainInvalid,
                detail: chain.isEmpty ? "no certificate presented" : "verification error \(checked)")
        }
        if status != 0 {
            return .refused(
                GnuTLSErrors.statusForVerification(status), detail: "GnuTLS verification status 0x\(String(status, radix: 16))")
        }
        return .trusted
    }

    /// What the handshake settled: application protocol, version, suite, and the peer's chain.
    static func facts(_ session: gnutls_session_t?, chain: [[UInt8]], serverName: String?) -> TLSSessionFacts {
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
        return TLSSessionFacts(
            negotiatedProtocol: negotiated, version: version, peerCertificates: chain, serverName: serverName,
            cipherSuite: negotiatedSuite(session))
    }

    /// The IANA number of the negotiated suite (GnuTLS names suites by their parts).
    static func negotiatedSuite(_ session: gnutls_session_t?) -> UInt16? {
        let cipher = gnutls_cipher_get(session)
        if gnutls_protocol_get_version(session) == GNUTLS_TLS1_3 {
            // A TLS 1.3 suite names only its AEAD and hash; GnuTLS still reports the key
            // exchange, which would match a TLS 1.2 suite with the same cipher below.
            switch cipher {
            case GNUTLS_CIPHER_AES_128_GCM: return 0x1301
            case GNUTLS_CIPHER_AES_256_GCM: return 0x1302
            case GNUTLS_CIPHER_CHACHA20_POLY1305: return 0x1303
            case GNUTLS_CIPHER_AES_128_CCM: return 0x1304
            default: return nil
            }
        }
        let exchange = gnutls_kx_get(session)
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

    /// Sends `serverName` as SNI, unless there is none or it is an address literal (SNI names
    /// hosts only).
    static func setServerName(_ serverName: String?, on session: gnutls_session_t?) throws(FlowError) {
        guard let serverName, SocketAddress(literal: serverName, port: 0) == nil else { return }
        try GnuTLSCall.check(gnutls_server_name_set(session, GNUTLS_NAME_DNS, serverName, serverName.utf8.count))
    }

    /// Offers `protocols` by ALPN; `mandatory` makes the handshake fail when the peer picks none
    /// (QUIC requires that).
    static func setApplicationProtocols(
        _ protocols: [String], on session: gnutls_session_t?, mandatory: Bool = false
    ) throws(FlowError) {
        // All names in one buffer, so the datums point into memory valid for the whole call.
        var joined = protocols.flatMap { Array($0.utf8) }
        let flags = mandatory ? UInt32(GNUTLS_ALPN_MANDATORY.rawValue) : 0
        let status: Int32 = joined.withUnsafeMutableBufferPointer { bytes in
            var datums: [gnutls_datum_t] = []
            var offset = 0
            for name in protocols {
                let count = name.utf8.count
                datums.append(gnutls_datum_t(data: bytes.baseAddress.map { $0 + offset }, size: UInt32(count)))
                offset += count
            }
            // GnuTLS copies the names before returning.
            return gnutls_alpn_set_protocols(session, &datums, UInt32(datums.count), flags)
        }
        try GnuTLSCall.check(status)
    }
}
