import Foundation
import Testing

@testable import Network

@Suite struct ValueTypesEndpointTests {
    @Test func hostPortDescriptions() throws {
        #expect(NWEndpoint.hostPort(host: "example.com", port: 443).debugDescription == "example.com:443")
        #expect(NWEndpoint.hostPort(host: "192.0.2.1", port: .http).debugDescription == "192.0.2.1:80")
        // IPv6 hosts use "." between address and port.
        #expect(NWEndpoint.hostPort(host: "::1", port: 8080).debugDescription == "::1.8080")
        #expect(NWEndpoint.hostPort(host: "fe80::1%lo", port: 22).debugDescription == "fe80::1%lo.22")
        #expect(NWEndpoint.hostPort(host: "example.com%lo", port: 1).debugDescription == "example.com%lo:1")
    }

    @Test func otherDescriptions() throws {
        let lo = try #require(NWInterface(systemInterfaceNamed: "lo"))
        #expect(NWEndpoint.service(name: "Printer", type: "_ipp._tcp", domain: "local.", interface: nil).debugDescription
            == "Printer._ipp._tcp.local.")
        #expect(NWEndpoint.service(name: "Printer", type: "_ipp._tcp.", domain: "local.", interface: lo).debugDescription
            == "Printer._ipp._tcp.local.%lo")
        #expect(NWEndpoint.unix(path: "/tmp/socket").debugDescription == "/tmp/socket")
        let url = try #require(URL(string: "https://example.com:8443/path"))
        #expect(NWEndpoint.url(url).debugDescription == "https://example.com:8443/path")
        let opaque = nw_endpoint_t(description: "opaque thing")
        #expect(NWEndpoint.opaque(opaque).debugDescription == "opaque thing")
    }

    @Test func interfaces() throws {
        let lo = try #require(NWInterface(systemInterfaceNamed: "lo"))
        #expect(NWEndpoint.hostPort(host: "fe80::1%lo", port: 1).interface == lo)
        #expect(NWEndpoint.hostPort(host: "example.com", port: 1).interface == nil)
        #expect(NWEndpoint.service(name: "a", type: "_b._tcp", domain: "local.", interface: lo).interface == lo)
        #expect(NWEndpoint.unix(path: "/x").interface == nil)
        #expect(NWEndpoint.url(try #require(URL(string: "http://a/"))).interface == nil)
        let wrapped = nw_endpoint_t(description: "w", underlyingEndpoint: .hostPort(host: "127.0.0.1%lo", port: 9))
        #expect(NWEndpoint.opaque(wrapped).interface == lo)
    }

    @Test func equality() {
        #expect(NWEndpoint.hostPort(host: "a", port: 1) == NWEndpoint.hostPort(host: "a", port: 1))
        #expect(NWEndpoint.hostPort(host: "a", port: 1) != NWEndpoint.hostPort(host: "a", port: 2))
        #expect(NWEndpoint.unix(path: "/a") != NWEndpoint.hostPort(host: "a", port: 1))
        let first = nw_endpoint_t(description: "same")
        let second = nw_endpoint_t(description: "same")
        #expect(NWEndpoint.opaque(first) == NWEndpoint.opaque(first))
        #expect(NWEndpoint.opaque(first) != NWEndpoint.opaque(second))
        #expect(Set([NWEndpoint.opaque(first), .opaque(first), .unix(path: "/a")]).count == 2)
    }
}

@Suite struct ValueTypesInterfaceAndPathTests {
    @Test func interfaceIdentity() throws {
        let lo = try #require(NWInterface(systemInterfaceNamed: "lo"))
        #expect(lo.name == "lo")
        #expect(lo.type == .loopback)
        #expect(lo.index > 0)
        #expect(lo.debugDescription == "lo")
        #expect(NWInterface(systemInterfaceIndex: lo.index) == lo)
        #expect(NWInterface(systemInterfaceNamed: "no-such-interface0") == nil)
        #expect(NWInterface(systemInterfaceNamed: "") == nil)
        #expect(NWInterface(systemInterfaceIndex: 0) == nil)

        // Equality is index + name; the type does not matter.
        let retyped = NWInterface(name: "lo", index: lo.index, type: .wifi)
        #expect(retyped == lo)
        #expect(retyped.hashValue == lo.hashValue)
        #expect(NWInterface(name: "lo", index: lo.index + 100, type: .loopback) != lo)
        #expect(NWInterface(name: "eth9", index: lo.index, type: .loopback) != lo)
    }

    @Test func radioTypes() {
        let radio = NWInterface.RadioType.cell(.standalone5G(.mmWave))
        guard case .cell(.standalone5G(let variant)) = radio else {
            Issue.record("unexpected radio type")
            return
        }
        #expect(variant == .mmWave)
        #expect(NWInterface.RadioType.WiFi.ax != .ac)
    }

    @Test func pathValues() throws {
        let lo = NWInterface(name: "lo", index: 1, type: .loopback)
        let eth = NWInterface(name: "eth0", index: 2, type: .wiredEthernet)
        let path = NWPath(
            status: .satisfied, availableInterfaces: [eth, lo], isExpensive: true,
            supportsIPv4: true, supportsIPv6: true, supportsDNS: true,
            gateways: [.hostPort(host: "192.0.2.254", port: 0)])
        #expect(path.status == .satisfied)
        #expect(path.unsatisfiedReason == .notAvailable)
        #expect(path.usesInterfaceType(.wiredEthernet))
        #expect(path.usesInterfaceType(.loopback))
        #expect(!path.usesInterfaceType(.wifi))
        #expect(path.isExpensive)
        #expect(!path.isConstrained)
        #expect(path.linkQuality == .unknown)
        #expect(path.gateways.count == 1)
        #expect(path.localEndpoint == nil)
        #expect(path.debugDescription == "satisfied, interfaces: eth0 lo, ipv4, ipv6, dns, expensive")

        #expect(path == NWPath(
            status: .satisfied, availableInterfaces: [eth, lo], isExpensive: true,
            supportsIPv4: true, supportsIPv6: true, supportsDNS: true,
            gateways: [.hostPort(host: "192.0.2.254", port: 0)]))
        #expect(path != NWPath(status: .satisfied, availableInterfaces: [eth, lo]))

        let down = NWPath(status: .unsatisfied, unsatisfiedReason: .localNetworkDenied)
        #expect(down.debugDescription == "unsatisfied (localNetworkDenied)")
        #expect(!down.usesInterfaceType(.other))
    }
}
