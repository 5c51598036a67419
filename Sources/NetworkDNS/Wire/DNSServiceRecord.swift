/// SRV RDATA (RFC 2782): where a service lives. The target is never compressed on the wire.
package struct DNSServiceRecord: Hashable, Sendable {
    package var priority: UInt16
    package var weight: UInt16
    package var port: UInt16
    package var target: DNSName

    package init(priority: UInt16, weight: UInt16, port: UInt16, target: DNSName) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }
}
