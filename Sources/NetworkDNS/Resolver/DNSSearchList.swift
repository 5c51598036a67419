/// The names to try for what the user typed, in order, with resolv.conf's search rules (as
/// glibc applies them): a name ending in "." is absolute and tried alone; a name with at least
/// `ndots` dots is tried as is first, then with each search domain; a shorter one with the
/// search domains first and as is last.
package enum DNSSearchList {
    /// The fully qualified names to try for `host`, in order; throws for names that cannot be encoded.
    package static func candidates(for host: String, searchDomains: [String], ndots: Int) throws(DNSResolverError) -> [DNSName] {
        guard let name = try? DNSName(host), !name.labels.isEmpty else { throw .invalidName(host) }
        if host.hasSuffix(".") { return [name] }
        let expanded = searchDomains.compactMap { domain -> DNSName? in
            guard let suffix = try? DNSName(domain) else { return nil }
            return try? name.appending(suffix)
        }
        let dots = host.utf8.count { $0 == UInt8(ascii: ".") }
        var names = dots >= ndots ? [name] + expanded : expanded + [name]
        // Search domains may repeat, or one may be empty: try each name once.
        var seen = Set<DNSName>()
        names = names.filter { seen.insert($0.lowercased()).inserted }
        return names
    }
}
