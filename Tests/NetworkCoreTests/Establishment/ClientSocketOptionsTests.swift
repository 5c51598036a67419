#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkSystem
import Testing

@testable import NetworkCore

/// The socket options of an outbound attempt, computed without a socket.
@Suite("Core.ClientSocketOptions")
struct ClientSocketOptionsTests {
    private let configuration = FlowConfiguration(target: .hostPort(host: "example.com", port: 443, interfaceName: nil))

    private func has(_ options: [SocketOptionSetting], _ level: Int32, _ name: Int32, _ value: Int32? = nil) -> Bool {
        options.contains { $0.level == level && $0.name == name && (value == nil || $0.value == value) }
    }

    @Test func tcpLeavesNagleOnUnlessAsked() throws {
        let address = try SocketAddress(ipAddress: "192.0.2.1", port: 443)
        var configuration = self.configuration
        let plain = ClientSocketOptions.settings(for: address, configuration: configuration, interfaceIndex: nil)
        #expect(has(plain, Int32(IPPROTO_TCP), TCP_NODELAY, 0))
        configuration.tcp.noDelay = true
        let noDelay = ClientSocketOptions.settings(for: address, configuration: configuration, interfaceIndex: nil)
        #expect(has(noDelay, Int32(IPPROTO_TCP), TCP_NODELAY, 1))
    }

    @Test func unixSocketsTakeNoIPOrTCPOptions() throws {
        let address = try SocketAddress(unixDomainSocketPath: "/tmp/client-socket-options.sock")
        var configuration = self.configuration
        configuration.tcp.noDelay = true
        let options = ClientSocketOptions.settings(for: address, configuration: configuration, interfaceIndex: nil)
        #expect(!options.contains { $0.level == Int32(IPPROTO_TCP) || $0.level == Int32(IPPROTO_IP) || $0.level == Int32(IPPROTO_IPV6) })
    }

    @Test func reuseAndRequiredInterface() throws {
        let address = try SocketAddress(ipAddress: "2001:db8::1", port: 443)
        var configuration = self.configuration
        #expect(!has(ClientSocketOptions.settings(for: address, configuration: configuration, interfaceIndex: nil), SOL_SOCKET, SO_REUSEADDR))
        configuration.allowLocalEndpointReuse = true
        let options = ClientSocketOptions.settings(for: address, configuration: configuration, interfaceIndex: 7)
        #expect(has(options, SOL_SOCKET, SO_REUSEADDR, 1) && has(options, SOL_SOCKET, SO_REUSEPORT, 1))
        #expect(has(options, SOL_SOCKET, InterfaceSelection.soBindToIfindex, 7))
    }
}
