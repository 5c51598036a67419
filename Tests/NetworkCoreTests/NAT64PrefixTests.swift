#if canImport(Glibc)
import Glibc
#endif
import Testing

@testable import NetworkCore

/// RFC 6052 embedding and RFC 7050 discovery, against the RFCs' own examples.
@Suite("NAT64.Prefix")
struct NAT64PrefixTests {
    /// A textual IPv6 address as 16 bytes (inet_pton; test input only).
    static func v6(_ text: String) -> [UInt8] {
        var address = in6_addr()
        precondition(inet_pton(AF_INET6, text, &address) == 1, "bad test address \(text)")
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    // RFC 6052 §2.4 table: 192.0.2.33 in 2001:db8::/N for each length.
    static let examples: [(Int, String)] = [
        (32, "2001:db8:c000:221::"),
        (40, "2001:db8:1c0:2:21::"),
        (48, "2001:db8:122:c000:2:2100::"),
        (56, "2001:db8:122:3c0:0:221::"),
        (64, "2001:db8:122:344:c0:2:2100:0"),
        (96, "2001:db8:122:344::192.0.2.33"),
    ]

    @Test("synthesis matches RFC 6052's table for every prefix length", arguments: [32, 40, 48, 56, 64])
    func synthesis(length: Int) throws {
        let base: [UInt8]
        switch length {
        case 32: base = Self.v6("2001:db8::")
        case 40: base = Self.v6("2001:db8:100::")
        case 48: base = Self.v6("2001:db8:122::")
        case 56: base = Self.v6("2001:db8:122:300::")
        default: base = Self.v6("2001:db8:122:344::")
        }
        let prefix = try #require(NAT64Prefix(bytes: base, length: length))
        let expected = Self.v6(Self.examples.first { $0.0 == length }!.1)
        #expect(prefix.synthesize([192, 0, 2, 33]) == expected)
        #expect(prefix.extract(expected) == [192, 0, 2, 33])
    }

    @Test("the well-known prefix embeds in the last 32 bits")
    func wellKnown() {
        #expect(NAT64Prefix.wellKnown.synthesize([192, 0, 2, 33]) == Self.v6("64:ff9b::c000:221"))
        #expect(NAT64Prefix.wellKnown.description == "64:ff9b:0:0:0:0:0:0/96")
    }

    @Test("discovery finds the prefix in ipv4only.arpa answers, for /96 and /64 alike")
    func discovery() {
        let answers = [Self.v6("64:ff9b::c000:aa"), Self.v6("64:ff9b::c000:ab")]
        #expect(NAT64Prefix.discover(inAnswers: answers) == [NAT64Prefix.wellKnown])
        let sixtyFour = NAT64Prefix(bytes: Self.v6("2001:db8:122:344::"), length: 64)!
        let embedded = sixtyFour.synthesize([192, 0, 0, 170])!
        #expect(NAT64Prefix.discover(inAnswers: [embedded]) == [sixtyFour])
    }

    @Test("answers without a well-known address, or with a non-zero u-octet, give nothing")
    func rejects() {
        #expect(NAT64Prefix.discover(inAnswers: [Self.v6("2001:db8::1")]).isEmpty)
        var damaged = NAT64Prefix(bytes: Self.v6("2001:db8:122:344::"), length: 64)!.synthesize([192, 0, 0, 170])!
        damaged[8] = 1
        // Only the /96 reading could remain, and it does not end in a well-known address.
        #expect(NAT64Prefix.discover(inAnswers: [damaged]).isEmpty)
        #expect(NAT64Prefix.discover(inAnswers: [[1, 2, 3]]).isEmpty)
        #expect(NAT64Prefix(bytes: Self.v6("2001:db8::"), length: 33) == nil)
    }
}
