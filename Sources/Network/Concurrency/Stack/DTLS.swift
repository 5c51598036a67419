import Foundation

/// DTLS in a stack: encrypted datagrams over UDP (`DTLS()` alone means DTLS over UDP over
/// IP). The same settings as ``TLS``; each send is one datagram.
public struct DTLS: NetworkProtocolOptions, OneToOneProtocol, MessageProtocol, DatagramProtocol, Sendable {
    public typealias BelowProtocol = UDP
    public typealias ContentType = Data
    public typealias LegacyMessage = NWProtocolUDP.Metadata

    /// What a received datagram reports besides its bytes.
    public struct Metadata: NetworkMetadataProtocol {
        /// The classic metadata of the datagram.
        public let other: [NWProtocolMetadata]
    }

    /// Whether a listener asks its clients for a certificate (as ``TLS/PeerAuthentication``).
    public enum PeerAuthentication: Equatable, Hashable, Sendable {
        /// No client certificate is asked for.
        case none
        /// A certificate is asked for and checked when one is presented; the handshake goes on
        /// without one.
        case optional
        /// A certificate is required and verified.
        case required
    }

    private var udp: UDP
    private var tls = TLS()

    /// DTLS over UDP, both with their defaults.
    public init() {
        udp = UDP()
    }

    /// DTLS over the UDP layer `builder` makes.
    public init(_ builder: () -> UDP) {
        udp = builder()
    }

    private func with(_ change: (TLS) -> TLS) -> DTLS {
        var copy = self
        copy.tls = change(tls)
        return copy
    }

    /// ALPN protocol identifiers, in order of preference.
    public func applicationProtocols(_ protocols: [String]) -> DTLS { with { $0.applicationProtocols(protocols) } }
    /// Replaces the default verification of the peer.
    public func certificateValidator(
        _ validator: @escaping @Sendable (sec_protocol_metadata_t, sec_trust_t) async -> Bool
    ) -> DTLS {
        with { $0.certificateValidator(validator) }
    }
    /// Cipher suites by group (recorded only, as for TLS).
    public func cipherSuiteGroups(_ groups: [tls_ciphersuite_group_t]) -> DTLS { with { $0.cipherSuiteGroups(groups) } }
    /// The cipher suites to offer, in order.
    public func cipherSuites(_ suites: [tls_ciphersuite_t]) -> DTLS { with { $0.cipherSuites(suites) } }
    /// Whether 0-RTT data may be sent (recorded only).
    public func earlyDataEnabled(_ enabled: Bool) -> DTLS { with { $0.earlyDataEnabled(enabled) } }
    /// The certificate and key this side presents.
    public func localIdentity(_ identity: sec_identity_t) -> DTLS { with { $0.localIdentity(identity) } }
    /// Whether a listener asks for and requires client certificates.
    public func peerAuthentication(_ preference: DTLS.PeerAuthentication) -> DTLS {
        with {
            switch preference {
            case .none: $0.peerAuthentication(.none)
            case .optional: $0.peerAuthentication(.optional)
            case .required: $0.peerAuthentication(.required)
            }
        }
    }
    /// Whether session tickets may be used.
    public func ticketsEnabled(_ enabled: Bool) -> DTLS { with { $0.ticketsEnabled(enabled) } }
    /// The oldest and newest DTLS versions to negotiate.
    public func version(min: tls_protocol_version_t?, max: tls_protocol_version_t?) -> DTLS { with { $0.version(min: min, max: max) } }
}

extension DTLS: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        plan.application.append(tls.makeOptions())
        udp.addLayers(to: &plan)
    }
}
