import Dispatch
import Foundation
import NetworkSync

/// Called by a verify block with the verdict on the peer: true to trust it.
public typealias sec_protocol_verify_complete_t = @Sendable (Bool) -> Void

/// A custom peer-verification routine: it gets the session metadata and the peer's trust object,
/// and must call the completion exactly once.
public typealias sec_protocol_verify_t =
    @Sendable (sec_protocol_metadata_t, sec_trust_t, @escaping sec_protocol_verify_complete_t) -> Void

/// The TLS settings of one `NWProtocolTLS.Options`, as the Security framework's
/// `sec_protocol_options_t`; change them with the `sec_protocol_options_*` functions.
public final class sec_protocol_options_t: Sendable {
    package struct Settings {
        package var minimumVersion: tls_protocol_version_t?
        package var maximumVersion: tls_protocol_version_t?
        package var applicationProtocols: [String] = []
        package var serverName: String?
        package var verifyBlock: sec_protocol_verify_t?
        package var verifyQueue: DispatchQueue?
        package var localIdentity: sec_identity_t?
        package var peerAuthenticationRequired: Bool?
        /// A server asks for a client certificate, checks one that comes and goes on without
        /// (the 2025 API's `PeerAuthentication.optional`); `peerAuthenticationRequired` wins.
        package var peerAuthenticationOptional = false
        package var preSharedKeys: [(key: [UInt8], identity: [UInt8])] = []
        package var cipherSuites: [UInt16] = []
        package var challengeBlock: sec_protocol_challenge_t?
        package var challengeQueue: DispatchQueue?
        /// On/off settings by name, as set: the engine acts on "resumption" and "tickets"; the
        /// others (such as "falseStart") are kept only to be read back.
        package var toggles: [String: Bool] = [:]
    }

    package let settings = Lock(Settings())

    package init() {}

    /// An independent copy (for `NWParameters.copy()`).
    package func copy() -> sec_protocol_options_t {
        let copy = sec_protocol_options_t()
        let snapshot = settings.withLock { $0 }
        copy.settings.withLock { $0 = snapshot }
        return copy
    }
}

/// Sets the oldest TLS version the session may negotiate.
public func sec_protocol_options_set_min_tls_protocol_version(
    _ options: sec_protocol_options_t, _ version: tls_protocol_version_t
) {
    options.settings.withLock { $0.minimumVersion = version }
}

/// Sets the newest TLS version the session may negotiate.
public func sec_protocol_options_set_max_tls_protocol_version(
    _ options: sec_protocol_options_t, _ version: tls_protocol_version_t
) {
    options.settings.withLock { $0.maximumVersion = version }
}

/// Adds an ALPN protocol identifier (for example `"h2"`), in order of preference.
public func sec_protocol_options_add_tls_application_protocol(
    _ options: sec_protocol_options_t, _ application_protocol: UnsafePointer<CChar>
) {
    let name = String(cString: application_protocol)
    options.settings.withLock { $0.applicationProtocols.append(name) }
}

/// Sets the name sent in SNI and checked against the server's certificate (by default the
/// connection's host name).
public func sec_protocol_options_set_tls_server_name(
    _ options: sec_protocol_options_t, _ server_name: UnsafePointer<CChar>
) {
    let name = String(cString: server_name)
    options.settings.withLock { $0.serverName = name }
}

/// Replaces the default verification (system trust store and host name) by `verify_block`,
/// called on `verify_block_queue`: for pinning, private CAs or trust on first use.
public func sec_protocol_options_set_verify_block(
    _ options: sec_protocol_options_t,
    _ verify_block: @escaping sec_protocol_verify_t,
    _ verify_block_queue: DispatchQueue
) {
    options.settings.withLock {
        $0.verifyBlock = verify_block
        $0.verifyQueue = verify_block_queue
    }
}

/// Sets the certificate and key this side presents (a server's identity, or a client certificate).
public func sec_protocol_options_set_local_identity(_ options: sec_protocol_options_t, _ identity: sec_identity_t) {
    options.settings.withLock { $0.localIdentity = identity }
}

/// Whether the peer must authenticate: a server then requires a client certificate; a client
/// set to false skips verifying the server (explicitly insecure).
public func sec_protocol_options_set_peer_authentication_required(
    _ options: sec_protocol_options_t, _ peer_authentication_required: Bool
) {
    options.settings.withLock { $0.peerAuthenticationRequired = peer_authentication_required }
}

/// Linux spelling of Apple's bridged `dispatch_data_t` (`__DispatchData`), so that code such as
/// `data as __DispatchData` compiles unchanged.
public typealias __DispatchData = DispatchData
/// The C name of the same type.
public typealias dispatch_data_t = DispatchData

/// Adds a pre-shared key and its identity (TLS 1.2 PSK, as Apple's peer-to-peer samples use).
/// A connection with a PSK negotiates TLS 1.2 unless a maximum version is set explicitly.
public func sec_protocol_options_add_pre_shared_key(
    _ options: sec_protocol_options_t, _ psk: __DispatchData, _ psk_identity: __DispatchData
) {
    let key = [UInt8](psk)
    let identity = [UInt8](psk_identity)
    options.settings.withLock { $0.preSharedKeys.append((key: key, identity: identity)) }
}

/// Adds a cipher suite to the ones offered (in order); without any, the library's defaults.
public func sec_protocol_options_append_tls_ciphersuite(_ options: sec_protocol_options_t, _ ciphersuite: tls_ciphersuite_t) {
    options.settings.withLock { $0.cipherSuites.append(ciphersuite.rawValue) }
}
