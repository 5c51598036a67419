import Foundation
import NIOCore
import Testing

@testable import NetworkDNS

/// The system resolver follows its configuration files: a new resolv.conf (a new network) is
/// picked up, and the cache of the old network's answers is dropped with it.
@Suite("DNS.SystemResolverSource")
struct SystemResolverSourceTests {
    @Test("a changed resolv.conf gives a resolver with the new nameservers; an unchanged one is reused")
    func followsResolvConf() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resolv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let resolvConf = folder.appendingPathComponent("resolv.conf")
        try "nameserver 192.0.2.1\n".write(to: resolvConf, atomically: true, encoding: .utf8)
        let cache = DNSCache()
        let source = SystemResolverSource(
            resolvConfPath: resolvConf.path, hostsPath: folder.appendingPathComponent("hosts").path,
            nsswitchPath: folder.appendingPathComponent("nsswitch.conf").path, cache: cache, recheckInterval: .zero)
        let first = source.current()
        #expect(first.configuration.nameservers.map { $0.ipAddress } == ["192.0.2.1"])
        #expect(source.current() === first)

        let question = DNSQuestion(name: try DNSName("cached.test"), type: .a)
        cache.insert(DNSAnswer(
            question: question, outcome: .nameDoesNotExist, records: [], aliases: [], ttl: 300, source: .network,
            duration: .zero))
        #expect(cache.lookup(question) != nil)

        // atomically: a new file (new inode), as DHCP clients and resolvconf write it.
        try "nameserver 192.0.2.2\nsearch example.test\n".write(to: resolvConf, atomically: true, encoding: .utf8)
        let second = source.current()
        #expect(second !== first)
        #expect(second.configuration.nameservers.map { $0.ipAddress } == ["192.0.2.2"])
        #expect(second.configuration.searchDomains == ["example.test"])
        #expect(cache.lookup(question) == nil, "the old network's answers are gone")
    }
}
