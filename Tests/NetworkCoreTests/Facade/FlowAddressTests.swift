import NIOCore
import NetworkCore
import Testing

/// The engine's address for the facade, made from NIO socket addresses.
@Suite("Core.FlowAddress")
struct FlowAddressTests {
    @Test("IPv4: bytes in network order and the port")
    func ipv4() throws {
        let address = FlowAddress(try SocketAddress(ipAddress: "192.0.2.7", port: 443))
        #expect(address == .ipv4(bytes: [192, 0, 2, 7], port: 443))
        #expect(address.unmappedBytes == [192, 0, 2, 7])
        #expect(!address.isIPv6)
        #expect(!address.isLoopback)
        #expect(FlowAddress(try SocketAddress(ipAddress: "127.9.9.9", port: 1)).isLoopback)
    }

    @Test("IPv6: 16 bytes, port and scope; a v4-mapped address unmaps to its 4 bytes")
    func ipv6() throws {
        let loopback = FlowAddress(try SocketAddress(ipAddress: "::1", port: 8080))
        #expect(loopback == .ipv6(bytes: [UInt8](repeating: 0, count: 15) + [1], port: 8080, scopeID: 0))
        #expect(loopback.isIPv6)
        #expect(loopback.isLoopback)
        let mapped = FlowAddress(try SocketAddress(ipAddress: "::ffff:127.0.0.1", port: 80))
        #expect(mapped.unmappedBytes == [127, 0, 0, 1])
        #expect(mapped.isLoopback)
        #expect(mapped.isIPv6)
        let documentation = FlowAddress(try SocketAddress(ipAddress: "2001:db8::1", port: 0))
        #expect(documentation.unmappedBytes.count == 16)
        #expect(!documentation.isLoopback)
    }

    @Test("UNIX-domain paths; no address bytes")
    func unix() throws {
        let address = FlowAddress(try SocketAddress(unixDomainSocketPath: "/tmp/flow-address.sock"))
        #expect(address == .unix(path: "/tmp/flow-address.sock"))
        #expect(address.unmappedBytes.isEmpty)
        #expect(!address.isLoopback)
    }

    @Test("an address target gives its address; names and paths give none")
    func targets() throws {
        let socketAddress = try SocketAddress(ipAddress: "198.51.100.1", port: 53)
        #expect(FlowTarget.address(socketAddress).flowAddress == .ipv4(bytes: [198, 51, 100, 1], port: 53))
        #expect(FlowTarget.hostPort(host: "example.com", port: 53, interfaceName: nil).flowAddress == nil)
        #expect(FlowTarget.unix(path: "/x").flowAddress == nil)
    }
}
