/// The `hosts:` line of nsswitch.conf(5), reduced to the one decision the resolver needs: may
/// it answer by itself (files + DNS + mDNS, which it implements), or must it defer to
/// getaddrinfo because some other NSS module (myhostname, resolve, nis, ldap, …) takes part.
package struct NSSwitchHosts: Hashable, Sendable {
    /// The service names in order, actions like `[NOTFOUND=return]` removed.
    package var sources: [String]

    /// The sources this package implements itself.
    package static let nativeSources: Set<String> = [
        "files", "dns", "mdns", "mdns4", "mdns6", "mdns_minimal", "mdns4_minimal", "mdns6_minimal",
    ]

    /// glibc's default when the file or the line is missing.
    package static let `default` = NSSwitchHosts(sources: ["files", "dns"])

    /// A hosts line from its source names, already without actions.
    package init(sources: [String]) {
        self.sources = sources
    }

    /// Parses nsswitch.conf text; a missing `hosts:` line gives glibc's default.
    package init(parsing text: String) {
        var found: [String]?
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = rawLine.prefix { $0 != "#" }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let database = line[..<colon].trimmingCharacters(in: " \t")
            guard database == "hosts" else { continue }
            var sources: [String] = []
            var insideAction = false
            for field in line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                // Actions are bracketed and may contain spaces: "[ NOTFOUND = return ]".
                if field.hasPrefix("[") { insideAction = true }
                if !insideAction { sources.append(field.lowercased()) }
                if field.hasSuffix("]") { insideAction = false }
            }
            found = sources
        }
        self.sources = found ?? Self.default.sources
    }

    /// True when every source is one we implement, so answering ourselves gives the same
    /// results as the system would.
    package var resolverMayAnswer: Bool {
        !sources.isEmpty && sources.allSatisfy { Self.nativeSources.contains($0) }
    }

    /// Whether `files` comes before `dns` (or dns is absent), i.e. hosts entries win.
    package var consultsFilesFirst: Bool {
        guard let files = sources.firstIndex(of: "files") else { return false }
        return sources.firstIndex(of: "dns").map { files < $0 } ?? true
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var result = self
        while let first = result.first, set.contains(first) { result.removeFirst() }
        while let last = result.last, set.contains(last) { result.removeLast() }
        return result
    }
}
