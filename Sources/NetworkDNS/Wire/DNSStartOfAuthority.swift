/// SOA RDATA. The resolver reads it from the authority section of negative answers: the
/// negative-cache TTL is min(SOA TTL, `minimum`) (RFC 2308 section 5).
package struct DNSStartOfAuthority: Hashable, Sendable {
    /// MNAME: the zone's primary server.
    package var primaryServer: DNSName
    /// RNAME: the administrator's mailbox, as a name.
    package var responsibleMailbox: DNSName
    /// Zone version.
    package var serial: UInt32
    /// Secondary refresh interval, seconds.
    package var refresh: UInt32
    /// Secondary retry interval, seconds.
    package var retry: UInt32
    /// When a secondary stops answering, seconds.
    package var expire: UInt32
    /// Negative-caching TTL (RFC 2308).
    package var minimum: UInt32

    /// SOA data from its parts.
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
