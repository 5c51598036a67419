import Foundation
import Testing

@testable import Network

@Suite struct ValueTypesIPv6AddressTests {
    @Test func parsesFullAndCompressedForms() throws {
        let full = try #require(IPv6Address("2001:0db8:0000:0000:0000:0000:0000:0001"))
        let compressed = try #require(IPv6Address("2001:db8::1"))
        #expect(full == compressed)
        #expect(compressed.debugDescription == "2001:db8::1")
        #expect(compressed.rawValue == Data([0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]))
        #expect(IPv6Address("::") == IPv6Address.any)
        #expect(IPv6Address("::1") == IPv6Address.loopback)
        #expect(IPv6Address("0:0:0:0:0:0:0:1") == IPv6Address.loopback)
        #expect(try #require(IPv6Address("FE80::ABCD")).debugDescription == "fe80::abcd")
        #expect(try #require(IPv6Address("1:2:3:4:5:6:7:8")).debugDescription == "1:2:3:4:5:6:7:8")
        #expect(try #require(IPv6Address("::ffff:192.0.2.1")).debugDescription == "::ffff:192.0.2.1")
    }

    @Test(arguments: [
        "", "localhost", "1.2.3.4", ":::", "1::2::3", "12345::1", "g::1", "1:2:3:4:5:6:7:8:9",
        "[::1]", "::1%", "::1%no-such-interface0", "2001:db8::1/64", "::ffff:256.0.0.1",
    ])
    func rejectsNonLiterals(_ text: String) {
        #expect(IPv6Address(text) == nil)
    }

    @Test func scopedLinkLocal() throws {
        let lo = try #require(NWInterface(systemInterfaceNamed: "lo"))
        let address = try #require(IPv6Address("fe80::1%lo"))
        #expect(address.interface == lo)
        #expect(address.isLinkLocal)
        #expect(address.debugDescription == "fe80::1%lo")
        #expect(address.rawValue.count == 16)
        #expect(address != IPv6Address("fe80::1"))
        #expect(address == IPv6Address(try #require(IPv6Address("fe80::1")).rawValue, lo))
    }

    @Test func rawDataOfWrongLengthFails() {
        #expect(IPv6Address(Data(repeating: 0, count: 4)) == nil)
        #expect(IPv6Address(Data(repeating: 0, count: 15)) == nil)
        #expect(IPv6Address(Data(repeating: 0, count: 17)) == nil)
        #expect(IPv6Address(Data(repeating: 0, count: 16)) == IPv6Address.any)
    }

    @Test func wellKnownAddresses() {
        #expect(IPv6Address.any.debugDescription == "::")
        #expect(IPv6Address.broadcast == IPv6Address.any)
        #expect(IPv6Address.loopback.debugDescription == "::1")
        #expect(IPv6Address.nodeLocalNodes.debugDescription == "ff01::1")
        #expect(IPv6Address.linkLocalNodes.debugDescription == "ff02::1")
        #expect(IPv6Address.linkLocalRouters.debugDescription == "ff02::2")
    }

    @Test func classification() throws {
        func address(_ text: String) throws -> IPv6Address { try #require(IPv6Address(text)) }

        #expect(IPv6Address.any.isAny)
        #expect(!IPv6Address.loopback.isAny)
        #expect(IPv6Address.loopback.isLoopback)
        #expect(!(try address("::2")).isLoopback)

        #expect(try address("::ffff:10.0.0.1").isIPv4Mapped)
        #expect(!(try address("::ffff:10.0.0.1")).isIPv4Compatabile)
        #expect(try address("::10.0.0.1").isIPv4Compatabile)
        #expect(!(try address("::10.0.0.1")).isIPv4Mapped)
        #expect(!IPv6Address.any.isIPv4Compatabile)
        #expect(!IPv6Address.loopback.isIPv4Compatabile)
        #expect(!(try address("1::10.0.0.1")).isIPv4Compatabile)

        #expect(try address("2002:c000:0204::1").is6to4)
        #expect(!(try address("2003::1")).is6to4)

        #expect(try address("fe80::1").isLinkLocal)
        #expect(try address("febf:ffff::1").isLinkLocal)
        #expect(!(try address("fec0::1")).isLinkLocal)
        #expect(!(try address("fe7f::1")).isLinkLocal)

        #expect(try address("fc00::1").isUniqueLocal)
        #expect(try address("fd12:3456::1").isUniqueLocal)
        #expect(!(try address("fe00::1")).isUniqueLocal)
        #expect(!(try address("fb00::1")).isUniqueLocal)

        #expect(try address("ff02::fb").isMulticast)
        #expect(!(try address("fe80::1")).isMulticast)
    }

    @Test func multicastScopes() throws {
        #expect(IPv6Address.nodeLocalNodes.multicastScope == .nodeLocal)
        #expect(IPv6Address.linkLocalNodes.multicastScope == .linkLocal)
        #expect(try #require(IPv6Address("ff05::2")).multicastScope == .siteLocal)
        #expect(try #require(IPv6Address("ff08::2")).multicastScope == .organizationLocal)
        #expect(try #require(IPv6Address("ff0e::101")).multicastScope == .global)
        #expect(try #require(IPv6Address("ff03::1")).multicastScope == nil)
        #expect(IPv6Address.loopback.multicastScope == nil)
        #expect(IPv6Address.Scope.global.rawValue == 0x0e)
        #expect(IPv6Address.Scope(rawValue: 8) == .organizationLocal)
    }

    @Test func embeddedIPv4() throws {
        #expect(try #require(IPv6Address("::ffff:192.0.2.7")).asIPv4 == IPv4Address("192.0.2.7"))
        #expect(try #require(IPv6Address("::192.0.2.7")).asIPv4 == IPv4Address("192.0.2.7"))
        #expect(try #require(IPv6Address("2001:db8::1")).asIPv4 == nil)
        #expect(IPv6Address.loopback.asIPv4 == nil)
        let scoped = try #require(IPv6Address("::ffff:127.0.0.1%lo"))
        #expect(scoped.asIPv4 == IPv4Address("127.0.0.1%lo"))
    }
}
