#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore

/// What resolv.conf(5) says, parsed with glibc's rules: the last `search`/`domain` line wins,
/// at most three nameservers count, unknown lines and options are ignored.
package struct ResolvConf: Hashable, Sendable {
    /// Nameserver addresses in file order, port 53 (IPv6 link-local ones carry their scope).
    package var nameservers: [SocketAddress] = []
    /// Search suffixes without the final dot; `domain` is a one-entry search list.
    package var searchDomains: [String] = []
    /// Names with fewer dots than this are tried with the search domains first.
    package var ndots: Int = 1
    /// Seconds to wait for one server before trying the next.
    package var timeoutSeconds: Int = 5
    /// Rounds over the whole server list.
    package var attempts: Int = 2
    /// Start each query at a different server.
    package var rotate: Bool = false
    /// `options edns0` was given. We send EDNS anyway (see `DNSResolverConfiguration`); kept
    /// for callers that want glibc's exact behaviour.
    package var edns0: Bool = false

    /// glibc's cap on nameservers (MAXNS).
    package static let maximumNameservers = 3

    /// glibc's defaults, as for an empty file.
    package init() {}

    /// Parses the text of a resolv.conf file.
    package init(parsing text: String) {
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = rawLine.prefix { $0 != "#" && $0 != ";" }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let keyword = fields.first else { continue }
            let values = fields.dropFirst()
            switch keyword {
            case "nameserver":
                guard let text = values.first, nameservers.count < Self.maximumNameservers,
                    let address = Self.nameserverAddress(text, port: 53)
                else { continue }
                nameservers.append(address)
            case "search":
                searchDomains = values.map(Self.trimDot).filter { !$0.isEmpty }
            case "domain":
                searchDomains = values.first.map { [Self.trimDot($0)] }?.filter { !$0.isEmpty } ?? []
            case "options":
                for option in values { apply(option: option) }
            default:
                continue
            }
        }
    }

    private mutating func apply(option: String) {
        let parts = option.split(separator: ":", maxSplits: 1).map(String.init)
        let value = parts.count == 2 ? Int(parts[1]) : nil
        switch parts.first {
        case "ndots": if let value, value >= 0 { ndots = min(value, 15) }
        case "timeout": if let value, value >= 1 { timeoutSeconds = min(value, 30) }
        case "attempts": if let value, value >= 1 { attempts = min(value, 5) }
        case "rotate": rotate = true
        case "edns0": edns0 = true
        default: break
        }
    }

    private static func trimDot(_ text: String) -> String {
        text.hasSuffix(".") ? String(text.dropLast()) : text
    }

    /// A socket address for a nameserver written as IPv4, IPv6 or IPv6 with `%scope` (an
    /// interface name or number).
    package static func nameserverAddress(_ text: String, port: UInt16) -> SocketAddress? {
        let parts = text.split(separator: "%", maxSplits: 1).map(String.init)
        if parts.count == 1 {
            return try? SocketAddress(ipAddress: text, port: Int(port))
        }
        guard let host = parts.first, parts.count == 2 else { return nil }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return nil }
        if let number = UInt32(parts[1]) {
            address.sin6_scope_id = number
        } else {
            let index = if_nametoindex(parts[1])
            guard index != 0 else { return nil }
            address.sin6_scope_id = index
        }
        return SocketAddress(address, host: text)
    }
}
