import NetworkCore

extension NWParameters {
    /// How traffic should be prioritized; mapped to a DSCP marking and socket priority.
    public enum ServiceClass: Equatable, Hashable, Sendable {
        /// Ordinary traffic (the default).
        case bestEffort
        /// Bulk transfers that can wait behind everything else, such as backups.
        case background
        /// Interactive video, such as video calls.
        case interactiveVideo
        /// Interactive voice, such as voice calls.
        case interactiveVoice
        /// Data the user is waiting for, such as a page load.
        case responsiveData
        /// Control traffic of real-time sessions, such as call signalling.
        case signaling

        /// The engine's equivalent of this service class.
        package var trafficClass: TrafficClass {
            switch self {
            case .bestEffort: return .bestEffort
            case .background: return .background
            case .interactiveVideo: return .interactiveVideo
            case .interactiveVoice: return .interactiveVoice
            case .responsiveData: return .responsiveData
            case .signaling: return .signaling
            }
        }
    }

    /// How a connection may use several interfaces at once (Multipath TCP).
    public enum MultipathServiceType: Equatable, Hashable, Sendable {
        /// One path only: plain TCP (the default).
        case disabled
        /// Keep one primary path and move to another when it fails.
        case handover
        /// Use the path with the lowest latency, adding others for reliability.
        case interactive
        /// Use all paths together for the most throughput.
        case aggregate
    }

    /// Whether name resolution may answer with records whose time to live has run out.
    public enum ExpiredDNSBehavior: Equatable, Hashable, Sendable {
        /// Let the system decide (the default).
        case systemDefault
        /// Answer with expired records at once and refresh them in the background.
        case allow
        /// Never answer with expired records.
        case prohibit
        /// Answer with expired records and keep doing so even when a refresh fails.
        case persistent
    }

    /// Who asked for the traffic: the application itself or its user.
    public enum Attribution: Equatable, Hashable, Sendable {
        /// Traffic the application starts on its own (the default).
        case developer
        /// Traffic the user asked for directly, such as loading a URL they typed.
        case user
    }
}
