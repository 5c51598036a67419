/// SOA RDATA. The resolver reads it from the authority section of negative answers: the
/// negative-cache TTL is min(SOA TTL, `minimum`) (RFC 2308 section 5).
package struct DNSStartOfAuthority: Hashable, Sendable {
    package var primaryServer: DNSName
    package var responsibleMailbox: DNSName
    package var serial: UInt32
    package var refresh: UInt32
    package var retry: UInt32
    package var expire: UInt32
    package var minimum: UInt32

    package init(
        primaryServer: DNSName, responsibleMailbox: DNSName, serial: UInt32, refresh: UInt32, retry: UInt32,
        expire: UInt32, minimum: UInt32
    ) {
        self.primaryServer = primaryServer
        self.responsibleMailbox = responsibleMailbox
        self.serial = serial
        self.refresh = refresh
        self.retry = retry
        self.expire = expire
        self.minimum = minimum
    }
}
