import Dispatch
import Foundation

/// Called by a challenge block with the identity to present (nil for none).
public typealias sec_protocol_challenge_complete_t = @Sendable (sec_identity_t?) -> Void

/// Asked for a client identity; must call the completion once.
public typealias sec_protocol_challenge_t =
    @Sendable (sec_protocol_metadata_t, @escaping sec_protocol_challenge_complete_t) -> Void

/// Sets a block that supplies the client certificate. On Linux it is asked once per connection
/// just before the handshake (BoringSSL through swift-nio-ssl offers no hook at the moment the
/// server asks), on `challenge_queue`; the identity it returns is presented if the server asks.
public func sec_protocol_options_set_challenge_block(
    _ options: sec_protocol_options_t,
    _ challenge_block: @escaping sec_protocol_challenge_t,
    _ challenge_queue: DispatchQueue
) {
    options.settings.withLock {
        $0.challengeBlock = challenge_block
        $0.challengeQueue = challenge_queue
    }
}

/// The oldest TLS version a connection accepts unless told otherwise (TLS 1.2 here).
public func sec_protocol_options_get_default_min_tls_protocol_version() -> tls_protocol_version_t { .TLSv12 }

/// The newest TLS version a connection offers unless told otherwise.
public func sec_protocol_options_get_default_max_tls_protocol_version() -> tls_protocol_version_t { .TLSv13 }

/// The oldest DTLS version unless told otherwise.
public func sec_protocol_options_get_default_min_dtls_protocol_version() -> tls_protocol_version_t { .DTLSv12 }

/// The newest DTLS version unless told otherwise.
public func sec_protocol_options_get_default_max_dtls_protocol_version() -> tls_protocol_version_t { .DTLSv12 }

/// Whether two option objects configure the same TLS session (verify and challenge blocks are
/// compared by presence only).
public func sec_protocol_options_are_equal(_ optionsA: sec_protocol_options_t, _ optionsB: sec_protocol_options_t) -> Bool {
    let a = optionsA.settings.withLock { $0 }
    let b = optionsB.settings.withLock { $0 }
    return a.minimumVersion == b.minimumVersion && a.maximumVersion == b.maximumVersion
        && a.applicationProtocols == b.applicationProtocols && a.serverName == b.serverName
        && a.peerAuthenticationRequired == b.peerAuthenticationRequired && a.cipherSuites == b.cipherSuites
        && a.peerAuthenticationOptional == b.peerAuthenticationOptional
        && a.preSharedKeys.map(\.key) == b.preSharedKeys.map(\.key)
        && a.preSharedKeys.map(\.identity) == b.preSharedKeys.map(\.identity)
        && (a.verifyBlock == nil) == (b.verifyBlock == nil) && (a.challengeBlock == nil) == (b.challengeBlock == nil)
        && a.localIdentity?.certificateChain == b.localIdentity?.certificateChain
}

// Knobs Apple exposes that the BoringSSL engine decides for itself. They are accepted so that
// Apple-platform code compiles and runs; each says what it does here.

/// Session resumption (on by default): QUIC clients resume a session a server gave a ticket for
/// unless this is false; TLS over TCP records the value only.
public func sec_protocol_options_set_tls_resumption_enabled(_ options: sec_protocol_options_t, _ resumption_enabled: Bool) {
    options.settings.withLock { $0.toggles["resumption"] = resumption_enabled }
}

/// Session tickets (on by default): QUIC listeners issue tickets for resumption unless this is
/// false; TLS over TCP records the value only.
public func sec_protocol_options_set_tls_tickets_enabled(_ options: sec_protocol_options_t, _ tickets_enabled: Bool) {
    options.settings.withLock { $0.toggles["tickets"] = tickets_enabled }
}

/// TLS False Start: not used by the engine; the value is recorded only.
public func sec_protocol_options_set_tls_false_start_enabled(_ options: sec_protocol_options_t, _ false_start_enabled: Bool) {
    options.settings.withLock { $0.toggles["falseStart"] = false_start_enabled }
}

/// Signed certificate timestamps: not requested by the engine; the value is recorded only.
public func sec_protocol_options_set_tls_sct_enabled(_ options: sec_protocol_options_t, _ sct_enabled: Bool) {
    options.settings.withLock { $0.toggles["sct"] = sct_enabled }
}

/// OCSP stapling: not requested by the engine; the value is recorded only.
public func sec_protocol_options_set_tls_ocsp_enabled(_ options: sec_protocol_options_t, _ ocsp_enabled: Bool) {
    options.settings.withLock { $0.toggles["ocsp"] = ocsp_enabled }
}

/// Renegotiation: the engine never renegotiates; the value is recorded only.
public func sec_protocol_options_set_tls_renegotiation_enabled(_ options: sec_protocol_options_t, _ renegotiation_enabled: Bool) {
    options.settings.withLock { $0.toggles["renegotiation"] = renegotiation_enabled }
}

/// Whether the session carried early (0-RTT) data the server accepted: only QUIC sessions do here.
public func sec_protocol_metadata_get_early_data_accepted(_ metadata: sec_protocol_metadata_t) -> Bool {
    metadata.earlyDataAccepted
}

/// Calls `handler` with each certificate of the identity, leaf first; false if it has none.
@discardableResult
public func sec_identity_access_certificates(_ identity: sec_identity_t, _ handler: (sec_certificate_t) -> Void) -> Bool {
    guard !identity.certificateChain.isEmpty else { return false }
    identity.certificateChain.forEach { handler(sec_certificate_t(derData: $0)) }
    return true
}

/// Whether two sessions have the same peer (the same leaf certificate).
public func sec_protocol_metadata_peers_are_equal(_ metadataA: sec_protocol_metadata_t, _ metadataB: sec_protocol_metadata_t) -> Bool {
    metadataA.peerCertificates.first?.derData == metadataB.peerCertificates.first?.derData
}

/// Offers a group of cipher suites. The engine's library (BoringSSL) offers its own modern
/// defaults whatever the group; the group is recorded only (explicit suites, appended with
/// `sec_protocol_options_append_tls_ciphersuite`, do restrict the offer).
public func sec_protocol_options_append_tls_ciphersuite_group(_ options: sec_protocol_options_t, _ group: tls_ciphersuite_group_t) {
    options.settings.withLock { $0.toggles["ciphersuiteGroup.\(group)"] = true }
}
