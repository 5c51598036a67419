import NetworkCore
import NetworkSync

/// The User Datagram Protocol: its definition, options and per-datagram metadata.
public final class NWProtocolUDP: NWProtocol, @unchecked Sendable {

    /// The definition identifying UDP (named `udp`).
    public static let definition: NWProtocolDefinition = NWProtocolDefinition(name: "udp")

    /// UDP settings for a connection or listener. The properties may be used from any thread.
    public final class Options: NWProtocolOptions, @unchecked Sendable {
        private let settings: Lock<UDPSocketSettings>

        /// Creates options with every setting at its default.
        public init() {
            settings = Lock(UDPSocketSettings())
            super.init(definition: NWProtocolUDP.definition)
        }

        private init(settings: UDPSocketSettings) {
            self.settings = Lock(settings)
            super.init(definition: NWProtocolUDP.definition)
        }

        /// Asks that outgoing datagrams carry no checksum (`SO_NO_CHECK`; IPv4 only, since IPv6
        /// requires UDP checksums).
        public var preferNoChecksum: Bool {
            get { settings.withLock { $0.preferNoChecksum } }
            set { settings.withLock { $0.preferNoChecksum = newValue } }
        }

        /// A snapshot of the current settings, for the engine's socket-option plan.
        package var socketSettings: UDPSocketSettings {
            settings.withLock { $0 }
        }

        /// An independent copy of these options.
        package override func copyOptions() -> NWProtocolOptions {
            Options(settings: socketSettings)
        }
    }

    /// Metadata of a UDP datagram. It has no public properties; it exists so that a UDP entry can
    /// be attached to a send context or found among a received message's metadata.
    public final class Metadata: NWProtocolMetadata, @unchecked Sendable {
        /// Creates empty UDP metadata.
        public init() {
            super.init(definition: NWProtocolUDP.definition)
        }
    }
}
