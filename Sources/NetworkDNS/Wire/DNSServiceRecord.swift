/// SRV RDATA (RFC 2782): where a service lives. The target is never compressed on the wire.
package struct DNSServiceRecord: Hashable, Sendable {
    /// Lower values are tried first.
    package var priority: UInt16
    /// Relative share among records of equal priority.
    package var weight: UInt16
    /// The service's port on the target.
    package var port: UInt16
    /// The host providing the service ("." means none).
    package var target: DNSName

    /// An SRV record's data from its parts.
    package init(priority: UInt16, weight: UInt16, port: UInt16, target: DNSName) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }
}
