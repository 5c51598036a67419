extension Bonjour {
    /// A Bonjour service a ``NetworkBrowser`` found: connect to it with
    /// `NetworkConnection(to: endpoint) { ... }`, which resolves it when it starts.
    public struct Endpoint: Connectable, Identifiable, Hashable, CustomStringConvertible, Sendable {
        /// The service's instance name ("Living Room").
        public let name: String
        /// The service type ("_game._tcp").
        public let type: String
        /// The domain ("local.").
        public let domain: String
        /// The browse result it came from (interfaces, TXT record).
        public let result: NWBrowser.Result

        init?(_ result: NWBrowser.Result) {
            guard case .service(let name, let type, let domain, _) = result.endpoint else { return nil }
            self.name = name
            self.type = type
            self.domain = domain
            self.result = result
        }

        /// Name, type and domain: one identifier per service.
        public var id: String { "\(name).\(type).\(domain)" }

        /// The name, type and domain.
        public var description: String { id }

        /// The classic endpoint of the service.
        public var nwEndpoint: NWEndpoint { result.endpoint }

        /// Endpoints are equal when they name the same service.
        public static func == (lhs: Bonjour.Endpoint, rhs: Bonjour.Endpoint) -> Bool {
            lhs.id == rhs.id
        }

        /// Hashes the service's identity.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(id)
        }
    }
}

extension Bonjour.Endpoint: ConnectableEndpoint {
    var connectionEndpoint: NWEndpoint { result.endpoint }
}
