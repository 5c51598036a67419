/// DNS-SD error codes the engine reports (values of `kDNSServiceErr_*` in `dns_sd.h`).
/// docs/dns-resolver.md has the table of which DNS outcome becomes which code.
package enum DNSServiceCode {
    /// A failure with no better code (FORMERR, an unusable socket, no nameserver, …).
    package static let unknown: Int32 = -65537
    /// NXDOMAIN: the name does not exist.
    package static let noSuchName: Int32 = -65538
    /// Out of memory (getaddrinfo's EAI_MEMORY).
    package static let noMemory: Int32 = -65539
    /// The name cannot be asked about (bad label or length).
    package static let badParam: Int32 = -65540
    /// NOTIMP: the server does not implement this kind of query.
    package static let unsupported: Int32 = -65544
    /// A service name is taken and may not be changed (`noAutoRename`).
    package static let nameConflict: Int32 = -65548
    /// The server's reply could not be decoded.
    package static let invalid: Int32 = -65549
    /// REFUSED: the server will not answer us.
    package static let refused: Int32 = -65553
    /// NODATA: the name exists but has no address of the family asked for.
    package static let noSuchRecord: Int32 = -65554
    /// SERVFAIL: the server could not get an answer; a temporary condition (RFC 2308 §7.1).
    package static let transient: Int32 = -65562
    /// No server answered in time.
    package static let timeout: Int32 = -65568
}
