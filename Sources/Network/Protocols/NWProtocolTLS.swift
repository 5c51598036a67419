/// Transport Layer Security (and, over UDP, DTLS): its definition, options and metadata.
///
/// Only the skeleton exists so far; the TLS configuration surface (`securityProtocolOptions`,
/// `securityProtocolMetadata` and the `sec_protocol_*` functions) comes with the TLS engine.
public final class NWProtocolTLS: NWProtocol, @unchecked Sendable {

    /// The definition identifying TLS (named `tls`).
    public static let definition: NWProtocolDefinition = NWProtocolDefinition(name: "tls")

    /// TLS settings for a connection or listener (DTLS uses the same class).
    public final class Options: NWProtocolOptions, @unchecked Sendable {
        /// Creates options with the default TLS configuration.
        public init() {
            super.init(definition: NWProtocolTLS.definition)
        }

        /// An independent copy of these options. (No settings exist yet; extend this when they do.)
        package override func copyOptions() -> NWProtocolOptions {
            Options()
        }
    }

    /// Facts about a negotiated TLS session.
    public final class Metadata: NWProtocolMetadata, @unchecked Sendable {
        /// Creates TLS metadata; the engine fills in the negotiated state.
        package init() {
            super.init(definition: NWProtocolTLS.definition)
        }
    }
}
