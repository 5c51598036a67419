import NetworkCore
import NetworkSync

/// The Internet Protocol layer (IPv4 and IPv6): its definition, options and per-packet metadata.
public final class NWProtocolIP: NWProtocol, @unchecked Sendable {

    /// The definition identifying IP (named `ip`).
    public static let definition: NWProtocolDefinition = NWProtocolDefinition(name: "ip")

    /// The Explicit Congestion Notification codepoints of an IP packet (RFC 3168).
    public enum ECN: Equatable, Hashable, Sendable {
        /// Not ECN-capable transport.
        case nonECT
        /// ECN-capable transport, codepoint ECT(0).
        case ect0
        /// ECN-capable transport, codepoint ECT(1).
        case ect1
        /// Congestion experienced.
        case ce
    }

    /// IP settings for a connection or listener. Every value starts at its system default; the
    /// properties may be used from any thread.
    public final class Options: NWProtocolOptions, @unchecked Sendable {

        /// Which IP version a connection may use.
        public enum Version: Equatable, Hashable, Sendable {
            /// Either version.
            case any
            /// IPv4 only.
            case v4
            /// IPv6 only.
            case v6
        }

        /// Which kind of local IPv6 address to prefer as a source address.
        public enum AddressPreference: Equatable, Hashable, Sendable {
            /// The system's usual choice.
            case `default`
            /// Prefer temporary (privacy) addresses.
            case temporary
            /// Prefer stable addresses.
            case stable
        }

        private let settings: Lock<IPSocketSettings>

        /// Creates options with every setting at its system default.
        package init() {
            settings = Lock(IPSocketSettings())
            super.init(definition: NWProtocolIP.definition)
        }

        private init(settings: IPSocketSettings) {
            self.settings = Lock(settings)
            super.init(definition: NWProtocolIP.definition)
        }

        /// Restricts the connection to one IP version; resolution then only returns addresses of
        /// that version. Defaults to ``Version/any``.
        public var version: NWProtocolIP.Options.Version {
            get {
                switch settings.withLock({ $0.version }) {
                case .any: return .any
                case .v4: return .v4
                case .v6: return .v6
                }
            }
            set {
                let mapped: IPSocketSettings.Version
                switch newValue {
                case .any: mapped = .any
                case .v4: mapped = .v4
                case .v6: mapped = .v6
                }
                settings.withLock { $0.version = mapped }
            }
        }

        /// The time-to-live (IPv4) or hop limit (IPv6) of outgoing packets (0: system default).
        public var hopLimit: UInt8 {
            get { settings.withLock { $0.hopLimit } }
            set { settings.withLock { $0.hopLimit = newValue } }
        }

        /// Sends IPv6 packets no larger than the minimum IPv6 MTU (1280 bytes); no effect on IPv4.
        public var useMinimumMTU: Bool {
            get { settings.withLock { $0.useMinimumMTU } }
            set { settings.withLock { $0.useMinimumMTU = newValue } }
        }

        /// Forbids fragmentation of outgoing packets (sets don't-fragment).
        public var disableFragmentation: Bool {
            get { settings.withLock { $0.disableFragmentation } }
            set { settings.withLock { $0.disableFragmentation = newValue } }
        }

        /// Records when each packet was received, reported in ``Metadata/receiveTime``.
        public var shouldCalculateReceiveTime: Bool {
            get { settings.withLock { $0.shouldCalculateReceiveTime } }
            set { settings.withLock { $0.shouldCalculateReceiveTime = newValue } }
        }

        /// Which kind of local IPv6 address to prefer. Defaults to ``AddressPreference/default``.
        public var localAddressPreference: NWProtocolIP.Options.AddressPreference {
            get {
                switch settings.withLock({ $0.localAddressPreference }) {
                case .default: return .default
                case .temporary: return .temporary
                case .stable: return .stable
                }
            }
            set {
                let mapped: IPSocketSettings.AddressPreference
                switch newValue {
                case .default: mapped = .default
                case .temporary: mapped = .temporary
                case .stable: mapped = .stable
                }
                settings.withLock { $0.localAddressPreference = mapped }
            }
        }

        /// Keeps multicast packets this host sends from being looped back to its own sockets.
        public var disableMulticastLoopback: Bool {
            get { settings.withLock { $0.disableMulticastLoopback } }
            set { settings.withLock { $0.disableMulticastLoopback = newValue } }
        }

        /// A snapshot of the current settings, for the engine's socket-option plan.
        package var socketSettings: IPSocketSettings {
            settings.withLock { $0 }
        }

        /// An independent copy of these options.
        package override func copyOptions() -> NWProtocolOptions {
            Options(settings: socketSettings)
        }
    }

    /// Per-packet IP metadata: set it on a send context to mark outgoing packets, or read it
    /// from a received message.
    public final class Metadata: NWProtocolMetadata, @unchecked Sendable {
        private struct State {
            var ecn: NWProtocolIP.ECN = .nonECT
            var serviceClass: NWParameters.ServiceClass = .bestEffort
            var receiveTime: UInt64 = 0
        }

        private let state: Lock<State>

        /// Creates metadata with no ECN marking, best-effort service class and no receive time.
        public init() {
            state = Lock(State())
            super.init(definition: NWProtocolIP.definition)
        }

        /// Creates metadata describing a received packet.
        package init(ecn: NWProtocolIP.ECN, serviceClass: NWParameters.ServiceClass = .bestEffort, receiveTime: UInt64) {
            state = Lock(State(ecn: ecn, serviceClass: serviceClass, receiveTime: receiveTime))
            super.init(definition: NWProtocolIP.definition)
        }

        /// The ECN codepoint of the packet. Ignored when sending on stream protocols such as TCP,
        /// which manage ECN themselves.
        public var ecn: NWProtocolIP.ECN {
            get { state.withLock { $0.ecn } }
            set { state.withLock { $0.ecn = newValue } }
        }

        /// The service class of the packet. Ignored when sending on TCP, whose service class
        /// comes from the parameters.
        public var serviceClass: NWParameters.ServiceClass {
            get { state.withLock { $0.serviceClass } }
            set { state.withLock { $0.serviceClass = newValue } }
        }

        /// When the packet was received, in nanoseconds of the monotonic raw clock; 0 unless
        /// ``Options/shouldCalculateReceiveTime`` was set.
        public package(set) var receiveTime: UInt64 {
            get { state.withLock { $0.receiveTime } }
            set { state.withLock { $0.receiveTime = newValue } }
        }
    }
}
