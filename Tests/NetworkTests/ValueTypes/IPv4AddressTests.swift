import Foundation
import Testing

@testable import Network

@Suite struct ValueTypesIPv4AddressTests {
    @Test func parsesDottedQuads() throws {
        let address = try #require(IPv4Address("192.0.2.33"))
        #expect(address.rawValue == Data([192, 0, 2, 33]))
        #expect(address.rawBytes == [192, 0, 2, 33])
        #expect(address.interface == nil)
        #expect(address.debugDescription == "192.0.2.33")
        #expect(IPv4Address("0.0.0.0") == IPv4Address.any)
        #expect(IPv4Address("255.255.255.255") == IPv4Address.broadcast)
    }

    @Test(arguments: [
        "", "localhost", "example.com", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-1", "01.2.3.4",
        "1.2.3.4 ", " 1.2.3.4", "::1", "1.2.3.4/24", "0x7f.0.0.1", "1.2.3.4%",
        "1.2.3.4%no-such-interface0",
    ])
    func rejectsNonLiterals(_ text: String) {
        #expect(IPv4Address(text) == nil)
    }

    @Test func scopedToAnExistingInterface() throws {
        let lo = try #require(NWInterface(systemInterfaceNamed: "lo"))
        let address = try #require(IPv4Address("127.0.0.1%lo"))
        #expect(address.interface == lo)
        #expect(address.interface?.type == .loopback)
        #expect(address.debugDescription == "127.0.0.1%lo")
        // Equality includes the interface.
        #expect(address != IPv4Address.loopback)
        #expect(address == IPv4Address(Data([127, 0, 0, 1]), lo))
        #expect(Set([address, IPv4Address.loopback, address]).count == 2)
    }

    @Test func rawDataOfWrongLengthFails() {
        #expect(IPv4Address(Data([1, 2, 3])) == nil)
        #expect(IPv4Address(Data([1, 2, 3, 4, 5])) == nil)
        #expect(IPv4Address(Data()) == nil)
        #expect(IPv4Address(Data(repeating: 0, count: 16)) == nil)
        #expect(IPv4Address(Data([10, 0, 0, 1]))?.debugDescription == "10.0.0.1")
        // A slice whose indices do not start at zero.
        let slice = Data([9, 9, 172, 16, 0, 1])[2...]
        #expect(IPv4Address(slice)?.debugDescription == "172.16.0.1")
    }

    @Test func wellKnownAddresses() {
        #expect(IPv4Address.any.debugDescription == "0.0.0.0")
        #expect(IPv4Address.broadcast.debugDescription == "255.255.255.255")
        #expect(IPv4Address.loopback.debugDescription == "127.0.0.1")
        #expect(IPv4Address.allHostsGroup.debugDescription == "224.0.0.1")
        #expect(IPv4Address.allRoutersGroup.debugDescription == "224.0.0.2")
        #expect(IPv4Address.allReportsGroup.debugDescription == "224.0.0.22")
        #expect(IPv4Address.mdnsGroup.debugDescription == "224.0.0.251")
    }

    @Test func classification() throws {
        // Deliberate: the whole 127.0.0.0/8 block is loopback.
        #expect(IPv4Address.loopback.isLoopback)
        #expect(try #require(IPv4Address("127.1.2.3")).isLoopback)
        #expect(try #require(IPv4Address("127.255.255.255")).isLoopback)
        #expect(!(try #require(IPv4Address("128.0.0.1")).isLoopback))
        #expect(!(try #require(IPv4Address("126.255.255.255")).isLoopback))

        #expect(try #require(IPv4Address("169.254.0.1")).isLinkLocal)
        #expect(try #require(IPv4Address("169.254.255.255")).isLinkLocal)
        #expect(!(try #require(IPv4Address("169.253.0.1")).isLinkLocal))
        #expect(!(try #require(IPv4Address("169.255.0.1")).isLinkLocal))

        #expect(IPv4Address.mdnsGroup.isMulticast)
        #expect(try #require(IPv4Address("239.255.255.250")).isMulticast)
        #expect(!(try #require(IPv4Address("240.0.0.1")).isMulticast))
        #expect(!(try #require(IPv4Address("223.255.255.255")).isMulticast))
        #expect(!IPv4Address.broadcast.isMulticast)
    }
}
