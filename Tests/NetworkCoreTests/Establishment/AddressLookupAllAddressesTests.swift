import NIOCore
import NIOPosix
import Testing

@testable import NetworkCore

/// `AddressLookup.allAddresses`: every address at once, for callers that do not race.
@Suite("Core.AddressLookupAllAddresses")
struct AddressLookupAllAddressesTests {
    private let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    private let target = FlowTarget.hostPort(host: "both.test", port: 1080, interfaceName: nil)

    /// Answers A first, then AAAA, as a lookup may.
    private func lookup() throws -> ScriptedAddressLookup {
        let v4 = try SocketAddress(ipAddress: "192.0.2.1", port: 1080)
        let v6 = try SocketAddress(ipAddress: "2001:db8::1", port: 1080)
        return ScriptedAddressLookup { _, _, sink in
            sink.answered(.ipv4, [v4])
            sink.answered(.ipv6, [v6])
            sink.finished()
        }
    }

    @Test func ipv6ComesFirst() async throws {
        let all = try await lookup().allAddresses(of: target, version: .any, on: eventLoop).get()
        #expect(all.map(\.ipAddress) == ["2001:db8::1", "192.0.2.1"])
    }

    @Test func theIPVersionFilters() async throws {
        let v4 = try await lookup().allAddresses(of: target, version: .v4, on: eventLoop).get()
        #expect(v4.map(\.ipAddress) == ["192.0.2.1"])
        let v6 = try await lookup().allAddresses(of: target, version: .v6, on: eventLoop).get()
        #expect(v6.map(\.ipAddress) == ["2001:db8::1"])
    }

    @Test func literalsNeedNoLookup() async throws {
        let never = ScriptedAddressLookup { _, _, _ in Issue.record("looked up a literal") }
        let all = try await never.allAddresses(
            of: .hostPort(host: "198.51.100.4", port: 80, interfaceName: nil), version: .any, on: eventLoop
        ).get()
        #expect(all.map(\.ipAddress) == ["198.51.100.4"])
    }

    @Test func noAddressesIsNoSuchRecord() async throws {
        let empty = ScriptedAddressLookup { _, _, sink in
            sink.answered(.ipv6, [])
            sink.answered(.ipv4, [])
            sink.finished()
        }
        await #expect(throws: FlowError.dns(DNSServiceCode.noSuchRecord)) {
            try await empty.allAddresses(of: target, version: .any, on: eventLoop).get()
        }
    }

    /// A family that failed says why when no address is found at all (NXDOMAIN here).
    @Test func aFamilyFailureIsTheError() async throws {
        let missing = ScriptedAddressLookup { _, _, sink in
            sink.failed(.ipv6, .dns(DNSServiceCode.noSuchName))
            sink.failed(.ipv4, .dns(DNSServiceCode.noSuchName))
            sink.finished()
        }
        await #expect(throws: FlowError.dns(DNSServiceCode.noSuchName)) {
            try await missing.allAddresses(of: target, version: .any, on: eventLoop).get()
        }
    }
}
