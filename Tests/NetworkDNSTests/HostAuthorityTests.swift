import NetworkDNS
import Testing

@Suite("DNS.HostAuthority")
struct HostAuthorityTests {
    @Test func ipv6LiteralsGoInBracketsNamesAndIPv4DoNot() {
        #expect(HostAuthority.authority("example.com", port: 8080) == "example.com:8080")
        #expect(HostAuthority.authority("192.0.2.1", port: 3128) == "192.0.2.1:3128")
        #expect(HostAuthority.authority("2001:db8::1", port: 443) == "[2001:db8::1]:443")
        #expect(HostAuthority.host("::1") == "[::1]")
        #expect(HostAuthority.host("localhost") == "localhost")
    }
}
