#if canImport(Glibc)
import Glibc
#endif
import CGnuTLS
import NetworkSync

/// GnuTLS credentials for one set of DTLS settings: the certificate store (system trust plus this
/// side's identity) and the pre-shared keys. Building them parses the system trust store, so
/// sessions with equal settings share one object; GnuTLS allows that across threads.
final class GnuTLSCredentials: @unchecked Sendable {
    private(set) var certificates: gnutls_certificate_credentials_t?
    private(set) var pskClient: gnutls_psk_client_credentials_t?
    private(set) var pskServer: gnutls_psk_server_credentials_t?
    /// The GnuTLS priority string that encodes versions, key exchanges and suites.
    let priority: String

    private init(_ settings: FlowTLSConfiguration, server: Bool, stream: Bool) throws(FlowError) {
        priority = GnuTLSPriority.string(for: settings, stream: stream)
        var certificates: gnutls_certificate_credentials_t?
        try GnuTLSCall.check(gnutls_certificate_allocate_credentials(&certificates))
        self.certificates = certificates
        // The system store verifies peers by default (and client certificates when required).
        _ = gnutls_certificate_set_x509_system_trust(certificates)
        if let key = settings.privateKey, !settings.certificateChain.isEmpty {
            try Self.setIdentity(chain: settings.certificateChain, key: key, on: certificates)
        } else if server && settings.preSharedKeys.isEmpty {
            // A DTLS server needs an identity or a pre-shared key.
            throw FlowError.tls(TLSStatus.badCertificate)
        }
        if !settings.preSharedKeys.isEmpty {
            if server {
                var psk: gnutls_psk_server_credentials_t?
                try GnuTLSCall.check(gnutls_psk_allocate_server_credentials(&psk))
                pskServer = psk
                // Keys are looked up per session (the session knows its settings).
                gnutls_psk_set_server_credentials_function(psk, dtlsServerPSKLookup)
            } else if let first = settings.preSharedKeys.first {
                var psk: gnutls_psk_client_credentials_t?
                try GnuTLSCall.check(gnutls_psk_allocate_client_credentials(&psk))
                pskClient = psk
                // The identity as bytes, not a C string: identities may hold NUL bytes (Apple's
                // peer-to-peer sample's start with some), and a C string would end there.
                let identity = Array(first.identity.utf8)
                let status = first.key.withUnsafeBufferPointer { key -> Int32 in
                    identity.withUnsafeBufferPointer { name in
                        var keyDatum = gnutls_datum_t(
                            data: UnsafeMutablePointer(mutating: key.baseAddress), size: UInt32(key.count))
                        var nameDatum = gnutls_datum_t(
                            data: UnsafeMutablePointer(mutating: name.baseAddress), size: UInt32(name.count))
                        return gnutls_psk_set_client_credentials2(psk, &nameDatum, &keyDatum, GNUTLS_PSK_KEY_RAW)
                    }
                }
                try GnuTLSCall.check(status)
            }
        }
    }

    deinit {
        if let certificates { gnutls_certificate_free_credentials(certificates) }
        if let pskClient { gnutls_psk_free_client_credentials(pskClient) }
        if let pskServer { gnutls_psk_free_server_credentials(pskServer) }
    }

    private static func setIdentity(
        chain: [[UInt8]], key: [UInt8], on credentials: gnutls_certificate_credentials_t?
    ) throws(FlowError) {
        var certificates: [gnutls_x509_crt_t?] = []
        defer { for certificate in certificates { gnutls_x509_crt_deinit(certificate) } }
        for der in chain {
            var certificate: gnutls_x509_crt_t?
            try GnuTLSCall.check(gnutls_x509_crt_init(&certificate))
            certificates.append(certificate)
            try GnuTLSCall.withDatum(der) { datum throws(FlowError) in
                try GnuTLSCall.check(gnutls_x509_crt_import(certificate, &datum, GNUTLS_X509_FMT_DER))
            }
        }
        var privateKey: gnutls_x509_privkey_t?
        try GnuTLSCall.check(gnutls_x509_privkey_init(&privateKey))
        defer { gnutls_x509_privkey_deinit(privateKey) }
        try GnuTLSCall.withDatum(key) { datum throws(FlowError) in
            // Accepts PKCS#8 as well as the algorithm-specific (PKCS#1, SEC1) encodings.
            try GnuTLSCall.check(gnutls_x509_privkey_import2(privateKey, &datum, GNUTLS_X509_FMT_DER, nil, 0))
        }
        let status = certificates.withUnsafeMutableBufferPointer { list in
            gnutls_certificate_set_x509_key(credentials, list.baseAddress, Int32(list.count), privateKey)
        }
        try GnuTLSCall.check(status)
    }

    // MARK: - Cache

    private struct Key: Hashable {
        var server: Bool
        var stream: Bool
        var priority: String
        var certificateChain: [[UInt8]]
        var privateKey: [UInt8]?
        var clientKey: [UInt8]?
        var clientIdentity: String?
    }

    private static let cache = Lock<[Key: GnuTLSCredentials]>([:])

    /// Shared credentials for `settings` (made on first use).
    static func shared(_ settings: FlowTLSConfiguration, server: Bool, stream: Bool = false) throws(FlowError) -> GnuTLSCredentials {
        let key = Key(
            server: server, stream: stream, priority: GnuTLSPriority.string(for: settings, stream: stream),
            certificateChain: settings.certificateChain, privateKey: settings.privateKey,
            // Server keys are looked up per session; only the client's key is baked in.
            clientKey: server ? nil : settings.preSharedKeys.first?.key,
            clientIdentity: server ? nil : settings.preSharedKeys.first?.identity)
        if let hit = cache.withLock({ $0[key] }) { return hit }
        let made = try GnuTLSCredentials(settings, server: server, stream: stream)
        cache.withLock { cache in
            if cache.count >= 64 { cache.removeAll() }  // bounded: settings rarely vary this much
            cache[key] = made
        }
        return made
    }
}

/// GnuTLS asks a server for the key of a PSK identity; the session's settings hold the keys. An
/// identity the server does not know gets its first key: Apple's peer-to-peer sample derives
/// its identity from the bytes of a `Data` value (a pointer among them), so its client and its
/// listener never name the same identity, and it works on Apple's platforms. The key still has
/// to match: a peer without it fails the handshake.
private func dtlsServerPSKLookup(
    _ session: gnutls_session_t?, _ username: UnsafePointer<CChar>?, _ key: UnsafeMutablePointer<gnutls_datum_t>?
) -> Int32 {
    guard let session, let username, let key, let raw = gnutls_session_get_ptr(session) else { return -1 }
    let owner = Unmanaged<GnuTLSSession>.fromOpaque(raw).takeUnretainedValue()
    let identity = String(cString: username)
    let keys = owner.settings.preSharedKeys
    guard let match = keys.first(where: { $0.identity == identity }) ?? keys.first,
        let copy = malloc(max(match.key.count, 1))
    else { return -1 }
    // GnuTLS frees the key with gnutls_free, which is free() unless an application replaced
    // the allocator (nothing in this process does).
    match.key.withUnsafeBytes { bytes in
        if let base = bytes.baseAddress { copy.copyMemory(from: base, byteCount: bytes.count) }
    }
    key.pointee = gnutls_datum_t(data: copy.assumingMemoryBound(to: UInt8.self), size: UInt32(match.key.count))
    return 0
}
