#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import PeerSupport
import Testing

@testable import NetworkCore

/// RFC 6724 destination ordering (the pure rules) and RFC 8305 family interleaving.
@Suite("Core.AddressSorting")
struct AddressSortingTests {
    /// 16-byte form of an IPv4 or IPv6 literal.
    static func bytes(_ text: String) -> [UInt8] {
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        var v4 = in_addr()
        precondition(inet_pton(AF_INET, text, &v4) == 1, "not an address: \(text)")
        return AddressSorting.mapped(ipv4: withUnsafeBytes(of: v4) { Array($0) })
    }

    /// A destination and the source the kernel would use for it (nil: no route).
    struct Case {
        var destination: String
        var source: String?
        var prefixLength: Int? = nil
    }

    /// The destinations of `cases`, best first.
    static func order(_ cases: [Case]) -> [String] {
        AddressSorting.sorted(cases) { item in
            AddressSorting.key(
                destination: bytes(item.destination),
                source: item.source.map { AddressSorting.Source(address: bytes($0), prefixLength: item.prefixLength) })
        }.map(\.destination)
    }

    @Test("rule 1: a destination without a route goes last")
    func unusableLast() {
        let sorted = Self.order([
            Case(destination: "2001:db8:1::1", source: nil),
            Case(destination: "198.51.100.121", source: "198.51.100.117"),
        ])
        #expect(sorted == ["198.51.100.121", "2001:db8:1::1"])
    }

    @Test("rule 2: a destination whose scope matches its source's comes first")
    func matchingScope() {
        // Only a link-local IPv6 source exists, so the global IPv6 destination's scope does not
        // match, while the IPv4 one's does.
        let sorted = Self.order([
            Case(destination: "2001:db8:1::1", source: "fe80::1"),
            Case(destination: "198.51.100.121", source: "198.51.100.117"),
        ])
        #expect(sorted == ["198.51.100.121", "2001:db8:1::1"])
    }

    @Test("rule 5: a destination whose label matches its source's comes first")
    func matchingLabel() {
        // A 6to4 source: the 6to4 destination shares its label, the native one does not.
        let sorted = Self.order([
            Case(destination: "2001:db8:1::1", source: "2002:c633:6401::2"),
            Case(destination: "2002:c633:6401::1", source: "2002:c633:6401::2"),
        ])
        #expect(sorted == ["2002:c633:6401::1", "2001:db8:1::1"])
    }

    @Test("rule 6: higher precedence first (native IPv6 before IPv4, loopback first of all)")
    func precedence() {
        #expect(Self.order([
            Case(destination: "198.51.100.121", source: "198.51.100.117"),
            Case(destination: "2001:db8:1::1", source: "2001:db8:1::2"),
        ]) == ["2001:db8:1::1", "198.51.100.121"])
        #expect(Self.order([
            Case(destination: "127.0.0.1", source: "127.0.0.1"),
            Case(destination: "::1", source: "::1"),
        ]) == ["::1", "127.0.0.1"])
        // ULAs (fc00::/7) rank below IPv4.
        #expect(Self.order([
            Case(destination: "fd00::1", source: "fd00::2"),
            Case(destination: "10.0.0.1", source: "10.0.0.2"),
        ]) == ["10.0.0.1", "fd00::1"])
    }

    @Test("rule 8: the smaller scope first")
    func smallerScope() {
        let sorted = Self.order([
            Case(destination: "2001:db8:1::1", source: "2001:db8:1::2"),
            Case(destination: "fe80::1", source: "fe80::2"),
        ])
        #expect(sorted == ["fe80::1", "2001:db8:1::1"])
    }

    @Test("rule 9: the longest prefix shared with the source first")
    func longestPrefix() {
        let sorted = Self.order([
            Case(destination: "2001:db8:3ffe::1", source: "2001:db8:3f44::2"),
            Case(destination: "2001:db8:1::1", source: "2001:db8:1::2"),
        ])
        #expect(sorted == ["2001:db8:1::1", "2001:db8:3ffe::1"])
    }

    @Test("rule 9 for IPv4 only within the source's known prefix; round robin is kept otherwise")
    func ipv4Prefix() {
        #expect(Self.order([
            Case(destination: "192.0.2.9", source: "10.0.0.2", prefixLength: 24),
            Case(destination: "10.0.0.5", source: "10.0.0.2", prefixLength: 24),
        ]) == ["10.0.0.5", "192.0.2.9"])
        #expect(Self.order([
            Case(destination: "192.0.2.9", source: "10.0.0.2"),
            Case(destination: "10.0.0.5", source: "10.0.0.2"),
        ]) == ["192.0.2.9", "10.0.0.5"])
    }

    @Test("rule 10: equal destinations keep the resolver's order")
    func stable() {
        let names = (1...6).map { "198.51.100.\($0)" }
        #expect(Self.order(names.map { Case(destination: $0, source: "203.0.113.1") }) == names)
    }

    @Test("scopes and policy values of the tables")
    func tables() {
        #expect(AddressSorting.scope(Self.bytes("fe80::1")) == 2)
        #expect(AddressSorting.scope(Self.bytes("fec0::1")) == 5)
        #expect(AddressSorting.scope(Self.bytes("ff05::1")) == 5)
        #expect(AddressSorting.scope(Self.bytes("169.254.1.1")) == 2)
        #expect(AddressSorting.scope(Self.bytes("10.1.1.1")) == 14)
        #expect(AddressSorting.policy(Self.bytes("::1")) == (50, 0))
        #expect(AddressSorting.policy(Self.bytes("2001::1")) == (5, 5))
        #expect(AddressSorting.policy(Self.bytes("192.0.2.1")) == (35, 4))
        #expect(AddressSorting.policy(Self.bytes("3ffe::1")) == (1, 12))
    }

    // MARK: Interleaving

    static func candidate(_ text: String) -> RaceCandidate {
        RaceCandidate(address: try! SocketAddress(ipAddress: text, port: 80))
    }

    @Test("families alternate after the first address's family")
    func interleave() {
        let sorted = ["2001:db8::1", "2001:db8::2", "2001:db8::3", "192.0.2.1", "192.0.2.2"].map(Self.candidate)
        #expect(FamilyInterleaver.interleave(sorted).map(\.address) == [
            "2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2", "2001:db8::3",
        ].map { Self.candidate($0).address })
        let ipv4First = ["192.0.2.1", "192.0.2.2", "2001:db8::1"].map(Self.candidate)
        #expect(FamilyInterleaver.interleave(ipv4First).map(\.address) == [
            "192.0.2.1", "2001:db8::1", "192.0.2.2",
        ].map { Self.candidate($0).address })
    }

    @Test("First Address Family Count 2 puts two of the first family ahead")
    func interleaveFirstCount() {
        let sorted = ["2001:db8::1", "2001:db8::2", "2001:db8::3", "192.0.2.1", "192.0.2.2"].map(Self.candidate)
        #expect(FamilyInterleaver.interleave(sorted, firstFamilyCount: 2).map(\.address) == [
            "2001:db8::1", "2001:db8::2", "192.0.2.1", "2001:db8::3", "192.0.2.2",
        ].map { Self.candidate($0).address })
    }

    // MARK: The kernel's source address

    @Test("the probe asks the kernel for the source address of each family")
    func sourceProbe() throws {
        let loopback = try SocketAddress(ipAddress: "127.0.0.1", port: 80)
        #expect(SourceAddressProbe.source(for: loopback, interfaceIndex: nil)?.ipAddress == "127.0.0.1")
        let loopback6 = try SocketAddress(ipAddress: "::1", port: 0)
        #expect(SourceAddressProbe.source(for: loopback6, interfaceIndex: nil)?.ipAddress == "::1")
        // Not an IP destination: nothing to ask.
        #expect(SourceAddressProbe.source(for: try SocketAddress(unixDomainSocketPath: "/tmp/x"), interfaceIndex: nil) == nil)
    }

    @Test("probed candidates carry the RFC 6724 keys the racer leads with")
    func probedKeys() throws {
        let ipv4 = SourceAddressProbe.candidates(for: [try SocketAddress(ipAddress: "127.0.0.1", port: 80)], interfaceIndex: nil)
        let ipv6 = SourceAddressProbe.candidates(for: [try SocketAddress(ipAddress: "::1", port: 80)], interfaceIndex: nil)
        let four = try #require(ipv4.first), six = try #require(ipv6.first)
        #expect(six.rank > four.rank, "::1 (precedence 50) ranks above 127.0.0.1 (35)")
        // So IPv6 leads even when the A answer was queued first.
        var interleaver = FamilyInterleaver()
        interleaver.insert([four])
        interleaver.insert([six])
        #expect(interleaver.next() == six)
    }

    // MARK: The engine's lookup

    @Test("the engine's lookup reports each family, then the end, so the racer never waits on it")
    func lookupReportsBothFamilies() async throws {
        let events = Recorder<String>()
        _ = DNSResolverAddressLookup().start("localhost", port: 80, sink: AddressLookupSink { event in
            switch event {
            case .answer(.ipv4, let addresses, _): events.append("A \(addresses.compactMap(\.ipAddress))")
            case .answer(.ipv6, let addresses, _): events.append("AAAA \(addresses.count)")
            case .familyFailed(let family, _): events.append("\(family) failed")
            case .finished: events.append("finished")
            case .failed(let error): events.append("failed \(error)")
            }
        })
        let seen = try await events.wait(count: 3, "three events")
        #expect(seen.contains { $0.hasPrefix("A [") && $0.contains("127.0.0.1") }, "\(seen)")
        #expect(seen.last == "finished")
    }
}
