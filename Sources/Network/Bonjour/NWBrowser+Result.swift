import NetworkDNS

extension NWBrowser {
    /// One service found: its endpoint (`NWEndpoint.service`, to connect to), the interfaces
    /// it was found on, and its TXT record when the descriptor asked for it.
    ///
    /// Two results are equal when they name the same service on the same interfaces with the
    /// same metadata; a result's hash is that of its endpoint, so a service stays in the same
    /// place of a set when only its interfaces or TXT record change.
    public struct Result: Equatable, Hashable, Sendable {
        /// The service, as `NWEndpoint.service(name:type:domain:interface:)`.
        public let endpoint: NWEndpoint
        /// The interfaces the service was found on.
        public let interfaces: [NWInterface]
        /// The service's TXT record, or `.none` when not asked for (or none arrived yet).
        public let metadata: Metadata

        init(_ result: MDNSBrowseResults.Result) {
            endpoint = .service(name: result.instance.name, type: result.instance.type, domain: result.instance.domain, interface: nil)
            interfaces = result.interfaces.compactMap { NWInterface(systemInterfaceIndex: $0) }
            metadata = result.txt.map { .bonjour(NWTXTRecord(attributes: $0)) } ?? .none
        }

        /// Hashes the endpoint only (see the type's description).
        public func hash(into hasher: inout Hasher) {
            hasher.combine(endpoint)
        }
    }
}

extension NWBrowser.Result {
    /// What a browse result carries beside its endpoint.
    public enum Metadata: CustomDebugStringConvertible, Equatable, Sendable {
        /// The service's TXT record.
        case bonjour(NWTXTRecord)
        /// Nothing.
        case none

        /// The TXT record's pairs, or "none".
        public var debugDescription: String {
            switch self {
            case .bonjour(let record): return record.debugDescription
            case .none: return "none"
            }
        }
    }
}
