/// Browses Bonjour (DNS-SD) services of one type: local multicast DNS in `local.`, unicast DNS
/// in other domains.
public struct Bonjour: BrowserProvider, Sendable {
    let type: String
    let domain: String?
    let includeTxtRecord: Bool
}

extension Bonjour: BrowsingProvider {
    var descriptor: NWBrowser.Descriptor {
        includeTxtRecord ? .bonjourWithTXTRecord(type: type, domain: domain) : .bonjour(type: type, domain: domain)
    }

    /// The services, by name (then type and domain) so that the order is stable.
    func endpoints(_ results: Set<NWBrowser.Result>) -> [Endpoint] {
        results.compactMap(Endpoint.init).sorted { ($0.name, $0.type, $0.domain) < ($1.name, $1.type, $1.domain) }
    }
}
