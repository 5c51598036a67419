/// What a ``NetworkBrowser`` looks for, and what it finds (`Endpoint`): `.bonjour("_game._tcp")`
/// makes a ``Bonjour`` provider.
public protocol BrowserProvider: Sendable {
    /// What the browser finds; a ``NetworkConnection`` can be made to it.
    associatedtype Endpoint: Connectable
}

extension BrowserProvider where Self == Bonjour {
    /// Browses Bonjour services of `type` (`_game._tcp`) in `domain` (nil: `local.`), with
    /// their TXT records when `includeTxtRecord` is true.
    public static func bonjour(_ type: String, domain: String? = nil, includeTxtRecord: Bool = false) -> Bonjour {
        Bonjour(type: type, domain: domain, includeTxtRecord: includeTxtRecord)
    }
}

/// A provider this module knows how to browse for: the classic browse it runs, and how its
/// results become the provider's endpoints.
protocol BrowsingProvider: BrowserProvider {
    var descriptor: NWBrowser.Descriptor { get }
    func endpoints(_ results: Set<NWBrowser.Result>) -> [Endpoint]
}
