#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import Testing
@testable import NetworkDNS

@Suite("resolv.conf, hosts and nsswitch.conf")
struct ConfigurationTests {
    @Test func parsesResolvConf() throws {
        let conf = ResolvConf(parsing: """
            # generated
            domain old.example
            nameserver 192.0.2.53
            nameserver 2001:db8::53   ; trailing comment
            nameserver fe80::1%1
            nameserver 198.51.100.1
            nameserver not-an-address
            search corp.example. lab.example
            options ndots:3 timeout:2 attempts:4 rotate edns0 unknown:1
            options timeout:0
            """)
        #expect(conf.nameservers.count == 3)
        #expect(conf.nameservers[0] == (try SocketAddress(ipAddress: "192.0.2.53", port: 53)))
        #expect(conf.nameservers[1] == (try SocketAddress(ipAddress: "2001:db8::53", port: 53)))
        #expect(conf.nameservers[2].ipAddress == "fe80::1")
        if case .v6(let scoped) = conf.nameservers[2] {
            #expect(scoped.address.sin6_scope_id == 1)
        } else {
            Issue.record("link-local nameserver is not IPv6")
        }
        #expect(conf.searchDomains == ["corp.example", "lab.example"])
        #expect(conf.ndots == 3)
        #expect(conf.timeoutSeconds == 2)
        #expect(conf.attempts == 4)
        #expect(conf.rotate && conf.edns0)
    }

    @Test func resolvConfDefaultsAndDomainLine() {
        let conf = ResolvConf(parsing: "search a.example\ndomain b.example\n")
        #expect(conf.searchDomains == ["b.example"])  // the last of search/domain wins
        #expect(conf.ndots == 1 && conf.timeoutSeconds == 5 && conf.attempts == 2 && !conf.rotate)
        let empty = DNSResolverConfiguration(resolvConf: "", hosts: nil, nsswitch: nil)
        #expect(empty.nameservers.map(\.ipAddress) == ["127.0.0.1", "::1"])
        #expect(empty.timeout == .seconds(5))
    }

    @Test func parsesHostsFile() {
        let hosts = HostsFile(parsing: """
            127.0.0.1\tlocalhost
            ::1 localhost ip6-localhost  # loopback
            10.0.0.5   web.example web   Alias.Example
            10.0.0.6   web.example
            # 10.9.9.9 commented.example
            not-an-ip broken.example
            fe80::1%eth0 scoped.example
            2001:db8::5 web.example
            """)
        #expect(hosts.addresses(for: "localhost", type: .a) == [.v4(DNSIPv4Address(127, 0, 0, 1))])
        #expect(hosts.addresses(for: "LOCALHOST.", type: .aaaa).map(\.description) == ["::1"])
        #expect(hosts.addresses(for: "web.example", type: .a).map(\.description) == ["10.0.0.5", "10.0.0.6"])
        #expect(hosts.addresses(for: "web.example", type: .aaaa).map(\.description) == ["2001:db8::5"])
        #expect(hosts.addresses(for: "alias.example", type: .a).map(\.description) == ["10.0.0.5"])
        #expect(hosts.contains("web"))
        #expect(!hosts.contains("commented.example"))
        #expect(!hosts.contains("broken.example"))
        #expect(!hosts.contains("scoped.example"))
    }

    @Test(arguments: [
        ("hosts: files dns", true),
        ("hosts:  files [NOTFOUND=return] mdns4_minimal dns", true),
        ("hosts: files mdns_minimal [ NOTFOUND = return ] dns mdns", true),
        ("hosts:\tfiles mdns6 mdns4 mdns6_minimal dns", true),
        ("hosts: files myhostname dns", false),
        ("hosts: resolve [!UNAVAIL=return] files dns", false),
        ("hosts: files nis dns", false),
        ("hosts: files ldap", false),
        ("passwd: files ldap\nhosts: dns files", true),
        ("passwd: files", true),  // no hosts line: glibc's default, files dns
        ("hosts:", false),
    ])
    func decidesWhetherWeMayAnswer(line: String, mayAnswer: Bool) {
        #expect(NSSwitchHosts(parsing: line).resolverMayAnswer == mayAnswer, "\(line)")
    }

    @Test func nsswitchOrder() {
        #expect(NSSwitchHosts(parsing: "hosts: files dns").consultsFilesFirst)
        #expect(!NSSwitchHosts(parsing: "hosts: dns files").consultsFilesFirst)
        #expect(!NSSwitchHosts(parsing: "hosts: dns").consultsFilesFirst)
        #expect(NSSwitchHosts(parsing: "# nothing").sources == ["files", "dns"])
    }

    @Test func loadsFilesFromInjectedPaths() throws {
        let directory = "/tmp/networkdns-config-\(UInt32.random(in: 0...UInt32.max))"
        try FileSystemHelper.write("nameserver 192.0.2.1\nsearch x.example\n", to: directory, name: "resolv.conf")
        try FileSystemHelper.write("10.1.1.1 box.x.example box\n", to: directory, name: "hosts")
        try FileSystemHelper.write("hosts: files myhostname dns\n", to: directory, name: "nsswitch.conf")
        defer { FileSystemHelper.remove(directory) }
        let configuration = DNSResolverConfiguration.system(
            resolvConfPath: "\(directory)/resolv.conf", hostsPath: "\(directory)/hosts",
            nsswitchPath: "\(directory)/nsswitch.conf")
        #expect(configuration.nameservers == [try SocketAddress(ipAddress: "192.0.2.1", port: 53)])
        #expect(configuration.searchDomains == ["x.example"])
        #expect(configuration.hosts.contains("box"))
        #expect(!configuration.nsswitch.resolverMayAnswer)
        let missing = DNSResolverConfiguration.system(
            resolvConfPath: "\(directory)/none", hostsPath: "\(directory)/none", nsswitchPath: "\(directory)/none")
        #expect(missing.nsswitch.resolverMayAnswer)
        #expect(missing.nameservers.count == 2)
    }

    @Test func searchListFollowsNdots() throws {
        let search = ["corp.example", "lab.example"]
        #expect(try DNSSearchList.candidates(for: "db", searchDomains: search, ndots: 1).map(\.description)
            == ["db.corp.example", "db.lab.example", "db"])
        #expect(try DNSSearchList.candidates(for: "db.eu", searchDomains: search, ndots: 1).map(\.description)
            == ["db.eu", "db.eu.corp.example", "db.eu.lab.example"])
        #expect(try DNSSearchList.candidates(for: "db.eu", searchDomains: search, ndots: 2).map(\.description)
            == ["db.eu.corp.example", "db.eu.lab.example", "db.eu"])
        #expect(try DNSSearchList.candidates(for: "db.eu.", searchDomains: search, ndots: 5).map(\.description) == ["db.eu"])
        #expect(throws: DNSResolverError.invalidName("a..b")) {
            try DNSSearchList.candidates(for: "a..b", searchDomains: [], ndots: 1)
        }
    }
}
