import Foundation
import Testing

@testable import Network

@Suite struct ValueTypesHostTests {
    @Test func literalsBecomeAddresses() throws {
        #expect(NWEndpoint.Host("192.0.2.1") == .ipv4(try #require(IPv4Address("192.0.2.1"))))
        #expect(NWEndpoint.Host("2001:db8::5") == .ipv6(try #require(IPv6Address("2001:db8::5"))))
        #expect(NWEndpoint.Host("::1") == .ipv6(.loopback))
    }

    @Test func mappedIPv6BecomesIPv4() throws {
        #expect(NWEndpoint.Host("::ffff:192.0.2.9") == .ipv4(try #require(IPv4Address("192.0.2.9"))))
        // IPv4-compatible literals stay IPv6.
        guard case .ipv6 = NWEndpoint.Host("::192.0.2.9") else {
            Issue.record("expected .ipv6")
            return
        }
    }

    @Test func namesStayNames() {
        #expect(NWEndpoint.Host("example.com") == .name("example.com", nil))
        #expect(NWEndpoint.Host("localhost") == .name("localhost", nil))
        #expect(NWEndpoint.Host("1.2.3") == .name("1.2.3", nil))
        #expect(NWEndpoint.Host("") == .name("", nil))
        #expect(NWEndpoint.Host("example.com").interface == nil)
        #expect(NWEndpoint.Host("example.com").debugDescription == "example.com")
    }

    @Test func scopes() throws {
        let lo = try #require(NWInterface(systemInterfaceNamed: "lo"))
        let linkLocal = NWEndpoint.Host("fe80::1%lo")
        #expect(linkLocal == .ipv6(try #require(IPv6Address("fe80::1%lo"))))
        #expect(linkLocal.interface == lo)
        #expect(linkLocal.debugDescription == "fe80::1%lo")

        let name = NWEndpoint.Host("printer.local%lo")
        #expect(name == .name("printer.local", lo))
        #expect(name.interface?.name == "lo")
        #expect(name.debugDescription == "printer.local%lo")

        // An unknown interface leaves the whole string as an unscoped name.
        #expect(NWEndpoint.Host("fe80::1%no-such-interface0") == .name("fe80::1%no-such-interface0", nil))
    }

    @Test func stringLiterals() throws {
        let host: NWEndpoint.Host = "127.0.0.1"
        #expect(host == .ipv4(.loopback))
        let name: NWEndpoint.Host = "example.org"
        #expect(name == .name("example.org", nil))
        let single: NWEndpoint.Host = "a"
        #expect(single == .name("a", nil))
        #expect(NWEndpoint.Host(unicodeScalarLiteral: "b") == .name("b", nil))
        #expect(NWEndpoint.Host(extendedGraphemeClusterLiteral: "c") == .name("c", nil))
    }
}

@Suite struct ValueTypesPortTests {
    @Test func wellKnownPorts() {
        #expect(NWEndpoint.Port.any.rawValue == 0)
        #expect(NWEndpoint.Port.ssh.rawValue == 22)
        #expect(NWEndpoint.Port.smtp.rawValue == 25)
        #expect(NWEndpoint.Port.http.rawValue == 80)
        #expect(NWEndpoint.Port.pop.rawValue == 110)
        #expect(NWEndpoint.Port.imap.rawValue == 143)
        #expect(NWEndpoint.Port.https.rawValue == 443)
        #expect(NWEndpoint.Port.imaps.rawValue == 993)
        #expect(NWEndpoint.Port.socks.rawValue == 1080)
    }

    @Test func literalsAndRawValues() {
        let port: NWEndpoint.Port = 8080
        #expect(port.rawValue == 8080)
        #expect(port.debugDescription == "8080")
        #expect(NWEndpoint.Port(rawValue: 65535)?.rawValue == 65535)
        #expect(NWEndpoint.Port(rawValue: 443) == .https)
        #expect(Set<NWEndpoint.Port>([80, 80, 443]).count == 2)
    }

    @Test func decimalStrings() {
        #expect(NWEndpoint.Port("0") == .any)
        #expect(NWEndpoint.Port("8080")?.rawValue == 8080)
        #expect(NWEndpoint.Port("65535")?.rawValue == 65535)
        #expect(NWEndpoint.Port("70000") == nil)
        #expect(NWEndpoint.Port("65536") == nil)
        #expect(NWEndpoint.Port("-1") == nil)
        #expect(NWEndpoint.Port("+80") == nil)
        #expect(NWEndpoint.Port(" 80") == nil)
        #expect(NWEndpoint.Port("") == nil)
    }

    @Test func serviceNames() {
        #expect(NWEndpoint.Port("https") == .https)
        #expect(NWEndpoint.Port("ssh") == .ssh)
        #expect(NWEndpoint.Port("imaps") == .imaps)
        #expect(NWEndpoint.Port("socks") == .socks)
        #expect(NWEndpoint.Port("notaservice") == nil)
        #expect(NWEndpoint.Port("https\0") == nil)
        // ntp is registered for UDP only: found through the UDP fallback when the services
        // database exists, unknown otherwise.
        let hasDatabase = FileManager.default.fileExists(atPath: "/etc/services")
        #expect(NWEndpoint.Port("ntp")?.rawValue == (hasDatabase ? 123 : nil))
    }
}
