import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Everything a `DNSResolver` needs to know about the system, as values: tests build one by
/// hand (nameserver on a free port, custom hosts), production loads it from /etc.
package struct DNSResolverConfiguration: Sendable {
    /// Servers to ask, in order (rotated per query when `rotate` is set).
    package var nameservers: [SocketAddress]
    /// Suffixes tried for short names (resolv.conf `search`/`domain`), without the final dot.
    package var searchDomains: [String]
    /// Names with fewer dots than this try the search domains first.
    package var ndots: Int
    /// How long to wait for one server's answer.
    package var timeout: TimeAmount
    /// Rounds over the server list.
    package var attempts: Int
    /// Spread queries over the servers instead of always starting with the first.
    package var rotate: Bool
    /// EDNS(0) UDP payload size to advertise; nil sends plain RFC 1035 queries (512-octet
    /// replies). 1232 avoids IP fragmentation on any path (the DNS Flag Day 2020 value), and
    /// unlike glibc we send EDNS without `options edns0`: every server of the last decade
    /// accepts it, and a FORMERR makes us retry without it.
    package var ednsPayloadSize: UInt16?
    /// The parsed hosts file, consulted before DNS for address lookups.
    package var hosts: HostsFile
    /// The hosts: line of nsswitch.conf.
    package var nsswitch: NSSwitchHosts
    /// Upper bound on how long NXDOMAIN/NODATA answers are cached (RFC 2308 suggests 1–3 hours
    /// as a maximum; a connection library wants to notice a new record sooner).
    package var maximumNegativeTTL: UInt32
    /// Negative answers without an SOA are cached this long.
    package var defaultNegativeTTL: UInt32

    /// A configuration from explicit values; defaults are glibc's, plus EDNS.
    package init(
        nameservers: [SocketAddress], searchDomains: [String] = [], ndots: Int = 1, timeout: TimeAmount = .seconds(5),
        attempts: Int = 2, rotate: Bool = false, ednsPayloadSize: UInt16? = 1232, hosts: HostsFile = HostsFile(),
        nsswitch: NSSwitchHosts = .default, maximumNegativeTTL: UInt32 = 300, defaultNegativeTTL: UInt32 = 5
    ) {
        self.nameservers = nameservers
        self.searchDomains = searchDomains
        self.ndots = ndots
        self.timeout = timeout
        self.attempts = attempts
        self.rotate = rotate
        self.ednsPayloadSize = ednsPayloadSize
        self.hosts = hosts
        self.nsswitch = nsswitch
        self.maximumNegativeTTL = maximumNegativeTTL
        self.defaultNegativeTTL = defaultNegativeTTL
    }

    /// Builds a configuration from the three files' texts (nil means the file is missing).
    /// Without any nameserver line glibc asks the local host, so do we.
    package init(resolvConf: String?, hosts: String?, nsswitch: String?) {
        let parsed = resolvConf.map(ResolvConf.init(parsing:)) ?? ResolvConf()
        var servers = parsed.nameservers
        if servers.isEmpty {
            servers = [ResolvConf.nameserverAddress("127.0.0.1", port: 53), ResolvConf.nameserverAddress("::1", port: 53)]
                .compactMap { $0 }
        }
        self.init(
            nameservers: servers, searchDomains: parsed.searchDomains, ndots: parsed.ndots,
            timeout: .seconds(Int64(parsed.timeoutSeconds)), attempts: parsed.attempts, rotate: parsed.rotate,
            hosts: hosts.map(HostsFile.init(parsing:)) ?? HostsFile(),
            nsswitch: nsswitch.map(NSSwitchHosts.init(parsing:)) ?? .default)
    }

    /// Reads the system files (paths injectable for tests and network namespaces).
    package static func system(
        resolvConfPath: String = "/etc/resolv.conf", hostsPath: String = "/etc/hosts",
        nsswitchPath: String = "/etc/nsswitch.conf"
    ) -> DNSResolverConfiguration {
        DNSResolverConfiguration(
            resolvConf: readTextFile(resolvConfPath), hosts: readTextFile(hostsPath), nsswitch: readTextFile(nsswitchPath))
    }

    /// Whole-file read with plain POSIX calls (this module does not use Foundation).
    static func readTextFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while data.count < 4 << 20 {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            data.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }
}
