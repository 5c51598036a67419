/// Advertises a listener as a Bonjour (DNS-SD) service.
public struct BonjourListenerProvider: ListenerProvider, Sendable {
    /// The service advertised.
    public let service: NWListener.Service

    /// A service `name` (nil: the machine's name) of `type` (for example `_game._tcp`) in
    /// `domain` (nil: `local.`), with `txtRecord`.
    public init(name: String? = nil, type: String, domain: String? = nil, txtRecord: NWTXTRecord? = nil) {
        if let txtRecord {
            service = NWListener.Service(name: name, type: type, domain: domain, txtRecord: txtRecord)
        } else {
            service = NWListener.Service(name: name, type: type, domain: domain)
        }
    }
}
