import Foundation

/// Facts about a TLS session, as the Security framework's `sec_protocol_metadata_t`.
public final class sec_protocol_metadata_t: @unchecked Sendable {
    package let negotiatedProtocol: String?
    package let negotiatedVersion: tls_protocol_version_t?
    package let peerCertificates: [sec_certificate_t]
    package let serverName: String?
    package let negotiatedCipherSuite: tls_ciphersuite_t?
    package let earlyDataAccepted: Bool
    // C strings handed out by the getters live as long as the metadata (immutable after init).
    fileprivate let negotiatedProtocolPointer: UnsafePointer<CChar>?
    fileprivate let serverNamePointer: UnsafePointer<CChar>?

    package init(
        negotiatedProtocol: String?, negotiatedVersion: tls_protocol_version_t?,
        peerCertificates: [sec_certificate_t], serverName: String?, negotiatedCipherSuite: tls_ciphersuite_t? = nil,
        earlyDataAccepted: Bool = false
    ) {
        self.earlyDataAccepted = earlyDataAccepted
        self.negotiatedCipherSuite = negotiatedCipherSuite
        self.negotiatedProtocol = negotiatedProtocol
        self.negotiatedVersion = negotiatedVersion
        self.peerCertificates = peerCertificates
        self.serverName = serverName
        self.negotiatedProtocolPointer = negotiatedProtocol.flatMap { UnsafePointer(strdup($0)) }
        self.serverNamePointer = serverName.flatMap { UnsafePointer(strdup($0)) }
    }

    deinit {
        free(UnsafeMutablePointer(mutating: negotiatedProtocolPointer))
        free(UnsafeMutablePointer(mutating: serverNamePointer))
    }
}

/// The ALPN protocol the peers agreed on, or nil.
public func sec_protocol_metadata_get_negotiated_protocol(_ metadata: sec_protocol_metadata_t) -> UnsafePointer<CChar>? {
    metadata.negotiatedProtocolPointer
}

/// The TLS version the peers agreed on.
public func sec_protocol_metadata_get_negotiated_tls_protocol_version(
    _ metadata: sec_protocol_metadata_t
) -> tls_protocol_version_t {
    metadata.negotiatedVersion ?? .TLSv12
}

/// The cipher suite the peers agreed on. Sessions whose stack does not report it (TLS over TCP,
/// which swift-nio-ssl runs) give the null suite, 0x0000.
public func sec_protocol_metadata_get_negotiated_tls_ciphersuite(_ metadata: sec_protocol_metadata_t) -> tls_ciphersuite_t {
    metadata.negotiatedCipherSuite ?? tls_ciphersuite_t(rawValue: 0)!
}

/// The server name (SNI) of the session, or nil.
public func sec_protocol_metadata_get_server_name(_ metadata: sec_protocol_metadata_t) -> UnsafePointer<CChar>? {
    metadata.serverNamePointer
}

/// Calls `handler` with each certificate the peer presented, leaf first; false when there are none.
@discardableResult
public func sec_protocol_metadata_access_peer_certificate_chain(
    _ metadata: sec_protocol_metadata_t, _ handler: (sec_certificate_t) -> Void
) -> Bool {
    guard !metadata.peerCertificates.isEmpty else { return false }
    metadata.peerCertificates.forEach(handler)
    return true
}
