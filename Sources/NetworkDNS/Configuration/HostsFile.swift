/// The parsed hosts(5) file: every name (lowercased) with its addresses in file order.
package struct HostsFile: Hashable, Sendable {
    /// IPv4 addresses per lowercased name, in file order.
    package private(set) var ipv4: [String: [DNSIPv4Address]] = [:]
    /// IPv6 addresses per lowercased name, in file order.
    package private(set) var ipv6: [String: [DNSIPv6Address]] = [:]

    /// An empty hosts file (nothing is answered locally).
    package init() {}

    /// Parses hosts-file text: "address name [aliases…]", '#' comments, blank lines; lines with
    /// an unparsable address are skipped like glibc does. IPv6 addresses with a scope are skipped
    /// (a record cannot carry a scope).
    package init(parsing text: String) {
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = rawLine.prefix { $0 != "#" }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard fields.count >= 2, let address = DNSIPAddress(fields[0]) else { continue }
            for name in fields.dropFirst() {
                let key = Self.key(name)
                switch address {
                case .v4(let v4): if !(ipv4[key]?.contains(v4) ?? false) { ipv4[key, default: []].append(v4) }
                case .v6(let v6): if !(ipv6[key]?.contains(v6) ?? false) { ipv6[key, default: []].append(v6) }
                }
            }
        }
    }

    /// Whether the file names `host` at all (in either family).
    package func contains(_ host: String) -> Bool {
        let key = Self.key(host)
        return ipv4[key] != nil || ipv6[key] != nil
    }

    /// The addresses of `host` for A (`.a`) or AAAA (`.aaaa`); empty when the file has none.
    package func addresses(for host: String, type: DNSRecordType) -> [DNSIPAddress] {
        let key = Self.key(host)
        switch type {
        case .a: return (ipv4[key] ?? []).map { .v4($0) }
        case .aaaa: return (ipv6[key] ?? []).map { .v6($0) }
        default: return []
        }
    }

    private static func key(_ name: String) -> String {
        var lowered = name.lowercased()
        if lowered.hasSuffix(".") { lowered.removeLast() }
        return lowered
    }
}
