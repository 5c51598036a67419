import NIOCore
import Testing

@testable import NetworkCore

/// `SocketAddress(literal:port:)`: address literals need no lookup, names do.
@Suite("Core.SocketAddressLiteral")
struct SocketAddressLiteralTests {
    @Test func parsesBothFamilies() throws {
        let v4 = try #require(SocketAddress(literal: "192.0.2.7", port: 443))
        #expect(v4.protocol == .inet && v4.ipAddress == "192.0.2.7" && v4.port == 443)
        let v6 = try #require(SocketAddress(literal: "2001:db8::1", port: 80))
        #expect(v6.protocol == .inet6 && v6.ipAddress == "2001:db8::1" && v6.port == 80)
    }

    @Test func namesAreNotLiterals() {
        #expect(SocketAddress(literal: "example.com", port: 80) == nil)
        #expect(SocketAddress(literal: "", port: 80) == nil)
        #expect(SocketAddress(literal: "[::1]", port: 80) == nil, "brackets belong to URLs, not to addresses")
    }

    @Test func linkLocalTakesTheInterfaceAsScope() throws {
        let scoped = try #require(SocketAddress(literal: "fe80::1", port: 9, interfaceName: "lo"))
        guard case .v6(let address) = scoped else {
            Issue.record("not IPv6: \(scoped)")
            return
        }
        #expect(address.address.sin6_scope_id != 0)
    }
}
