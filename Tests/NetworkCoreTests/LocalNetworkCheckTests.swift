import NIOCore
import NetworkSystem
import Testing

@testable import NetworkCore

/// `acceptLocalOnly`: which peers count as being on a directly connected network.
@Suite("Core.LocalNetworkCheck")
struct LocalNetworkCheckTests {
    private let interfaces = [
        SystemInterface(
            name: "eth0", index: 2, type: .wiredEthernet, isUp: true, isRunning: true, supportsMulticast: true,
            isExpensive: false, isConstrained: false,
            addresses: [
                SystemAddress(family: .inet, bytes: [10, 1, 0, 5], prefixLength: 16),
                SystemAddress(family: .inet6, bytes: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [5], prefixLength: 64),
            ])
    ]

    private func local(_ text: String) throws -> Bool {
        LocalNetworkCheck.isLocal(try SocketAddress(ipAddress: text, port: 1), interfaces: interfaces)
    }

    @Test func loopbackAndLinkLocalAreLocal() throws {
        #expect(try local("127.0.0.1"))
        #expect(try local("127.9.9.9"))
        #expect(try local("::1"))
        #expect(try local("169.254.3.4"))
        #expect(try local("fe80::1234"))
        #expect(try local("::ffff:127.0.0.1"), "an IPv4-mapped loopback peer on a dual-stack socket")
    }

    @Test func peersInsideAnInterfacePrefixAreLocal() throws {
        #expect(try local("10.1.200.7"))
        #expect(try local("::ffff:10.1.3.3"))
        #expect(try local("2001:db8::77"))
    }

    @Test func everythingElseIsNot() throws {
        #expect(try !local("10.2.0.1"))
        #expect(try !local("8.8.8.8"))
        #expect(try !local("2001:db8:1::77"))
        #expect(try !local("2606:4700::1111"))
    }
}
