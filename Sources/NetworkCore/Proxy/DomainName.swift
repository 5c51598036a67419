/// Host-name comparisons shared by `no_proxy` and by `matchDomains`/`excludedDomains`.
enum DomainName {
    /// Lower-cased, without a trailing dot, without IPv6 brackets: the form names are compared in.
    static func normalized(_ name: some StringProtocol) -> String {
        var text = name.lowercased()
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Whether `host` is `domain` or a subdomain of it. A leading `.` or `*.` on `domain` is
    /// ignored, so `.example.com`, `*.example.com` and `example.com` all cover `example.com`
    /// and `a.example.com` (curl's reading; people write all three meaning the same thing).
    static func isWithin(_ host: String, domain: String) -> Bool {
        var suffix = normalized(domain)
        if suffix.hasPrefix("*.") { suffix.removeFirst(2) }
        while suffix.hasPrefix(".") { suffix.removeFirst() }
        guard !suffix.isEmpty else { return false }
        let name = normalized(host)
        return name == suffix || name.hasSuffix("." + suffix)
    }
}
