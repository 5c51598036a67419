import Foundation

/// QUIC in a stack: a multiplexed, encrypted transport over UDP (TLS 1.3 inside it). A
/// connection over it is one QUIC connection: it opens and accepts streams (``QUIC/Stream``)
/// and carries the connection's datagrams (``QUIC/Datagrams``) instead of sending and receiving
/// itself. As with ``NWProtocolQUIC/Options``, the server's certificate is verified against the
/// system's trust store and the host name by default.
public struct QUIC: NetworkProtocolOptions, MultiplexProtocol, Sendable {
    public typealias BelowProtocol = UDP

    /// Connection-wide QUIC metadata.
    public struct Metadata: NetworkMetadataProtocol {}

    /// The TLS settings of QUIC's handshake; each setter returns the QUIC layer, so they chain.
    public struct TLS: Sendable {
        fileprivate var quic: QUIC?
        fileprivate var settings = Network.TLS()

        private func with(_ change: (Network.TLS) -> Network.TLS) -> QUIC {
            var layer = quic ?? QUIC(alpn: [])
            layer.tlsSettings = change(settings)
            return layer
        }

        /// Replaces the default verification of the peer.
        public func certificateValidator(
            _ validator: @escaping @Sendable (sec_protocol_metadata_t, sec_trust_t) async -> Bool
        ) -> QUIC {
            with { $0.certificateValidator(validator) }
        }
        /// The cipher suites to offer, in order.
        public func cipherSuites(_ suites: [tls_ciphersuite_t]) -> QUIC { with { $0.cipherSuites(suites) } }
        /// Cipher suites by group (recorded only).
        public func ciphersuiteGroups(_ groups: [tls_ciphersuite_group_t]) -> QUIC { with { $0.cipherSuiteGroups(groups) } }
        /// The certificate and key this side presents.
        public func localIdentity(_ identity: sec_identity_t) -> QUIC { with { $0.localIdentity(identity) } }
        /// Whether a listener asks for and requires client certificates.
        public func peerAuthentication(_ preference: Network.TLS.PeerAuthentication) -> QUIC {
            with { $0.peerAuthentication(preference) }
        }
    }

    private let alpn: [String]
    private var udp: UDP
    fileprivate var tlsSettings = Network.TLS()
    private var transportSettings: [String: Int] = [:]

    /// QUIC offering the ALPN identifiers `alpn`, over UDP.
    public init(alpn: [String]) {
        self.alpn = alpn
        udp = UDP()
    }

    /// QUIC offering `alpn`, over the UDP layer `builder` makes.
    public init(alpn: [String], _ builder: () -> UDP) {
        self.alpn = alpn
        udp = builder()
    }

    /// The handshake's TLS settings.
    public var tls: QUIC.TLS { QUIC.TLS(quic: self, settings: tlsSettings) }

    private func with(_ key: String, _ value: Int) -> QUIC {
        var copy = self
        copy.transportSettings[key] = value
        return copy
    }

    /// Milliseconds of silence after which the connection closes.
    public func idleTimeout(_ milliseconds: Int) -> QUIC { with("idleTimeout", milliseconds) }
    /// Bytes the peer may send on the whole connection before more credit.
    public func initialMaxData(_ bytes: Int) -> QUIC { with("initialMaxData", bytes) }
    /// Credit for each bidirectional stream this side opens.
    public func initialMaxStreamDataBidirectionalLocal(_ bytes: Int) -> QUIC { with("initialMaxStreamDataBidirectionalLocal", bytes) }
    /// Credit for each bidirectional stream the peer opens.
    public func initialMaxStreamDataBidirectionalRemote(_ bytes: Int) -> QUIC { with("initialMaxStreamDataBidirectionalRemote", bytes) }
    /// Credit for each unidirectional stream.
    public func initialMaxStreamDataUnidirectional(_ bytes: Int) -> QUIC { with("initialMaxStreamDataUnidirectional", bytes) }
    /// How many bidirectional streams the peer may open.
    public func initialMaxBidirectionalStreams(_ count: Int) -> QUIC { with("initialMaxBidirectionalStreams", count) }
    /// How many unidirectional streams the peer may open.
    public func initialMaxUnidirectionalStreams(_ count: Int) -> QUIC { with("initialMaxUnidirectionalStreams", count) }
    /// The largest datagram frame accepted (0: no datagrams).
    public func maxDatagramFrameSize(_ bytes: Int) -> QUIC { with("maxDatagramFrameSize", bytes) }
    /// The largest UDP payload accepted.
    public func maxUDPPayloadSize(_ bytes: Int) -> QUIC { with("maxUDPPayloadSize", bytes) }
}

extension QUIC: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        // UDP's own options give way to QUIC's; the IP layer below stays.
        udp.addLayers(to: &plan)
        plan.transport = makeOptions()
    }

    /// The classic options these settings make.
    func makeOptions() -> NWProtocolQUIC.Options {
        let options = NWProtocolQUIC.Options(alpn: alpn)
        tlsSettings.apply(to: options.securityProtocolOptions)
        for (key, value) in transportSettings {
            switch key {
            case "idleTimeout": options.idleTimeout = value
            case "initialMaxData": options.initialMaxData = value
            case "initialMaxStreamDataBidirectionalLocal": options.initialMaxStreamDataBidirectionalLocal = value
            case "initialMaxStreamDataBidirectionalRemote": options.initialMaxStreamDataBidirectionalRemote = value
            case "initialMaxStreamDataUnidirectional": options.initialMaxStreamDataUnidirectional = value
            case "initialMaxBidirectionalStreams": options.initialMaxStreamsBidirectional = value
            case "initialMaxUnidirectionalStreams": options.initialMaxStreamsUnidirectional = value
            case "maxDatagramFrameSize": options.maxDatagramFrameSize = value
            case "maxUDPPayloadSize": options.maxUDPPayloadSize = value
            default: break
            }
        }
        return options
    }
}
