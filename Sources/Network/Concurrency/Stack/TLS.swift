import Foundation

/// TLS in a stack: an encrypted byte stream over TCP. `TLS()` alone means TLS over TCP over
/// IP. By default the server's certificate is verified against the system's trust store and
/// the host name, as with ``NWProtocolTLS/Options``.
public struct TLS: NetworkProtocolOptions, OneToOneProtocol, StreamProtocol, Sendable {
    public typealias BelowProtocol = TCP

    /// What a receive on a TLS connection reports besides its bytes.
    public struct Metadata: NetworkMetadataProtocol {
        /// The peer closed its side: no bytes follow these.
        public let endOfStream: Bool
        /// The classic metadata of the layers involved.
        public let other: [NWProtocolMetadata]
    }

    /// Whether a listener asks its clients for a certificate.
    public enum PeerAuthentication: Equatable, Hashable, Sendable {
        /// No client certificate is asked for (the default for clients; a client always
        /// verifies the server).
        case none
        /// A certificate is asked for and checked when one is presented; the handshake goes on
        /// without one.
        case optional
        /// A certificate is required and verified.
        case required
    }

    private var tcp: TCP
    private var edits: [@Sendable (sec_protocol_options_t) -> Void] = []

    /// TLS over TCP, both with their defaults.
    public init() {
        tcp = TCP()
    }

    /// TLS over the TCP layer `builder` makes.
    public init(@ProtocolStackBuilder<TCP> _ builder: () -> TCP) {
        tcp = builder()
    }

    private func with(_ edit: @escaping @Sendable (sec_protocol_options_t) -> Void) -> TLS {
        var copy = self
        copy.edits.append(edit)
        return copy
    }

    /// ALPN protocol identifiers to offer (clients) or accept (servers), in order of preference.
    public func applicationProtocols(_ protocols: [String]) -> TLS {
        with { options in
            for name in protocols { sec_protocol_options_add_tls_application_protocol(options, name) }
        }
    }

    /// Replaces the default verification of the peer: `validator` gets the session and the
    /// peer's trust object and answers whether to trust it.
    public func certificateValidator(
        _ validator: @escaping @Sendable (sec_protocol_metadata_t, sec_trust_t) async -> Bool
    ) -> TLS {
        with { options in
            sec_protocol_options_set_verify_block(options, { metadata, trust, complete in
                Task { complete(await validator(metadata, trust)) }
            }, TLS.verifyQueue)
        }
    }

    /// The cipher suites to offer, in order (without any, the library's defaults).
    public func cipherSuites(_ suites: [tls_ciphersuite_t]) -> TLS {
        with { options in
            for suite in suites { sec_protocol_options_append_tls_ciphersuite(options, suite) }
        }
    }

    /// Cipher suites by group. Recorded only: the library's defaults are used (see
    /// docs/api-deviations.md).
    public func cipherSuiteGroups(_ groups: [tls_ciphersuite_group_t]) -> TLS {
        with { options in
            for group in groups { sec_protocol_options_append_tls_ciphersuite_group(options, group) }
        }
    }

    /// The oldest and newest TLS versions to negotiate (nil: the default).
    public func version(min: tls_protocol_version_t?, max: tls_protocol_version_t?) -> TLS {
        with { options in
            if let min { sec_protocol_options_set_min_tls_protocol_version(options, min) }
            if let max { sec_protocol_options_set_max_tls_protocol_version(options, max) }
        }
    }

    /// The certificate and key this side presents (a server's identity, or a client certificate).
    public func localIdentity(_ identity: sec_identity_t) -> TLS {
        with { sec_protocol_options_set_local_identity($0, identity) }
    }

    /// Whether a listener asks for client certificates: not at all, asking and going on without
    /// one (a certificate that comes is still checked), or requiring one.
    public func peerAuthentication(_ preference: TLS.PeerAuthentication) -> TLS {
        with { options in
            // (On a client "not required" would mean not verifying the server: only a
            // requirement or a request is passed on, which a client ignores.)
            switch preference {
            case .none: break
            case .optional: options.settings.withLock { $0.peerAuthenticationOptional = true }
            case .required: sec_protocol_options_set_peer_authentication_required(options, true)
            }
        }
    }

    /// Whether session tickets may be used to resume later sessions.
    public func ticketsEnabled(_ enabled: Bool) -> TLS {
        with { sec_protocol_options_set_tls_tickets_enabled($0, enabled) }
    }

    /// Whether 0-RTT early data may be sent (only idempotent sends would use it).
    public func earlyDataEnabled(_ enabled: Bool) -> TLS {
        // (This engine sends no early data: recorded only, as Apple's knobs the library decides.)
        with { options in options.settings.withLock { $0.toggles["earlyData"] = enabled } }
    }

    /// Where verify blocks made from async validators are called from (they start a task).
    private static let verifyQueue = DispatchQueue(label: "network.tls.validator")

    func makeOptions() -> NWProtocolTLS.Options {
        let options = NWProtocolTLS.Options()
        apply(to: options.securityProtocolOptions)
        return options
    }

    /// Writes these settings into `options` (QUIC's handshake takes them this way).
    func apply(to options: sec_protocol_options_t) {
        for edit in edits { edit(options) }
    }
}

extension TLS: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        plan.application.append(makeOptions())
        tcp.addLayers(to: &plan)
    }
}
