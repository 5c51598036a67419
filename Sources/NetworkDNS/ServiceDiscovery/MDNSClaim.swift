/// A set of records an mDNS responder claims under one name by probing (`MDNSRegistration`):
/// a service instance (`MDNSService`) or this host's address records (`MDNSHost`).
package protocol MDNSClaim: Equatable, Sendable {
    /// Every record advertised; the unique ones share one name, the name probing claims.
    func records() throws(DNSWireError) -> [MDNSRecord]
    /// The same claim under the next name, after a conflict.
    func renamed() -> Self
    /// Whether another responder's record for the claimed name is in fact ours (sent by this
    /// host on another interface), which is no conflict. Beyond what `records()` lists.
    func owns(_ record: DNSResourceRecord) -> Bool
}

extension MDNSClaim {
    package func owns(_ record: DNSResourceRecord) -> Bool { false }
}

extension MDNSService: MDNSClaim {
    /// "Name" becomes "Name (2)" (see `renamed(_:)`).
    package func renamed() -> MDNSService {
        var service = self
        service.instance = Self.renamed(instance)
        return service
    }
}

extension MDNSRegistration where Claim == MDNSService {
    /// Claims a service instance's name.
    package init(service: MDNSService, noAutoRename: Bool = false) {
        self.init(claim: service, noAutoRename: noAutoRename)
    }

    /// The service as claimed (after a rename, under its new name).
    package var service: MDNSService { claim }
}
