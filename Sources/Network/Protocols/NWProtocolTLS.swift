/// Transport Layer Security (and, over UDP, DTLS): its definition, options and metadata.
public final class NWProtocolTLS: NWProtocol, @unchecked Sendable {

    /// The definition identifying TLS (named `tls`).
    public static let definition: NWProtocolDefinition = NWProtocolDefinition(name: "tls")

    /// TLS settings for a connection or listener (DTLS uses the same class). Configure them
    /// through ``securityProtocolOptions`` with the `sec_protocol_options_*` functions.
    public final class Options: NWProtocolOptions, @unchecked Sendable {
        /// The TLS settings object the `sec_protocol_options_*` functions change.
        public let securityProtocolOptions: sec_protocol_options_t

        /// Creates options with the default TLS configuration: TLS 1.2 or newer, the server
        /// verified against the system trust store and the connection's host name.
        public init() {
            securityProtocolOptions = sec_protocol_options_t()
            super.init(definition: NWProtocolTLS.definition)
        }

        private init(copying other: sec_protocol_options_t) {
            securityProtocolOptions = other.copy()
            super.init(definition: NWProtocolTLS.definition)
        }

        /// An independent copy of these options.
        package override func copyOptions() -> NWProtocolOptions {
            Options(copying: securityProtocolOptions)
        }
    }

    /// Facts about a negotiated TLS session.
    public final class Metadata: NWProtocolMetadata, @unchecked Sendable {
        /// The session's facts, read with the `sec_protocol_metadata_*` functions.
        public let securityProtocolMetadata: sec_protocol_metadata_t

        /// Creates TLS metadata from the negotiated state.
        package init(_ metadata: sec_protocol_metadata_t) {
            securityProtocolMetadata = metadata
            super.init(definition: NWProtocolTLS.definition)
        }
    }
}
