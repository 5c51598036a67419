/// What a ``NetworkListener`` advertises: `.bonjour(type:)` makes a ``BonjourListenerProvider``.
public protocol ListenerProvider {
    /// The service to advertise.
    var service: NWListener.Service { get }
}

extension ListenerProvider where Self == BonjourListenerProvider {
    /// Advertises the listener by Bonjour as `name` (nil: the machine's name) of `type` in
    /// `domain` (nil: `local.`), with `txtRecord`.
    public static func bonjour(
        name: String? = nil, type: String, domain: String? = nil, txtRecord: NWTXTRecord? = nil
    ) -> BonjourListenerProvider {
        BonjourListenerProvider(name: name, type: type, domain: domain, txtRecord: txtRecord)
    }
}
