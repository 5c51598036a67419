import Testing
@testable import NetworkDNS

@Suite("DNS wire codec")
struct WireCodecTests {
    /// A reply dnsmasq 2.90 sent for "dual.test A" (captured with a raw socket): ID 0x1234,
    /// QR AA RD RA, one question, one answer whose owner is a pointer to offset 12.
    @Test func decodesCapturedDnsmasqAnswer() throws {
        let wire = bytes(hex: "1234 8580 0001 0001 0000 0000 04 6475616c 04 74657374 00 0001 0001"
            + " c00c 0001 0001 0000001e 0004 0a4d0002")
        let message = try DNSMessage(decoding: wire)
        #expect(message.header.id == 0x1234)
        #expect(message.header.isResponse && message.header.isAuthoritative && message.header.recursionAvailable)
        #expect(!message.header.isTruncated)
        #expect(message.header.responseCode == .noError)
        #expect(message.questions == [DNSQuestion(name: try DNSName("dual.test"), type: .a)])
        #expect(message.answers.count == 1)
        #expect(message.answers[0].name == (try DNSName("dual.test")))
        #expect(message.answers[0].ttl == 30)
        #expect(message.answers[0].data == .a(DNSIPv4Address(10, 77, 0, 2)))
        // Re-encoding compresses the owner exactly as dnsmasq did.
        #expect(message.encoded() == wire)
    }

    /// A query built by hand from RFC 1035 section 4.1 plus an RFC 6891 OPT record.
    @Test func encodesQueryWithEDNS() throws {
        let query = DNSMessage.query(id: 0xBEEF, question: DNSQuestion(name: try DNSName("example.com"), type: .aaaa), ednsPayloadSize: 1232)
        let expected = bytes(hex: "beef 0100 0001 0000 0000 0001 07 6578616d706c65 03 636f6d 00 001c 0001"
            + " 00 0029 04d0 00000000 0000")
        #expect(query.encoded() == expected)
        #expect(try DNSMessage(decoding: expected).ednsPayloadSize == 1232)
    }

    @Test func headerFlagsRoundTrip() {
        for flags in [UInt16(0x8180), 0x8583, 0x0100, 0x87B0, 0xFFCF] {
            #expect(DNSHeader(id: 7, flags: flags).flags == flags & ~0x0040)
        }
    }

    @Test func roundTripsEveryRecordType() throws {
        let owner = try DNSName("svc.example.org")
        let target = try DNSName("host.example.org")
        let records: [DNSResourceRecord] = [
            DNSResourceRecord(name: owner, type: .a, ttl: 1, data: .a(DNSIPv4Address(192, 0, 2, 1))),
            DNSResourceRecord(name: owner, type: .aaaa, ttl: 2, data: .aaaa(try #require(DNSIPv6Address("2001:db8::1")))),
            DNSResourceRecord(name: owner, type: .cname, ttl: 3, data: .cname(target)),
            DNSResourceRecord(name: try DNSName("1.2.0.192.in-addr.arpa"), type: .ptr, ttl: 4, data: .ptr(target)),
            DNSResourceRecord(
                name: try DNSName("_h._tcp.example.org"), type: .srv, ttl: 5,
                data: .srv(DNSServiceRecord(priority: 1, weight: 2, port: 443, target: target))),
            DNSResourceRecord(name: owner, type: .txt, ttl: 6, data: .txt([Array("a=1".utf8), [], Array("b".utf8)])),
            DNSResourceRecord(
                name: owner, type: .https, ttl: 7,
                data: .serviceBinding(
                    DNSServiceBinding(
                        priority: 1, targetName: .root,
                        parameters: [
                            .mandatory([1, 3]), .alpn([Array("h3".utf8), Array("h2".utf8)]), .noDefaultALPN, .port(8443),
                            .ipv4Hint([DNSIPv4Address(192, 0, 2, 7)]), .ech([1, 2, 3, 4]),
                            .ipv6Hint([try #require(DNSIPv6Address("2001:db8::7"))]), .unknown(key: 65000, value: [9, 9]),
                        ]))),
            DNSResourceRecord(
                name: owner, type: .svcb, ttl: 8, data: .serviceBinding(DNSServiceBinding(priority: 0, targetName: target))),
            DNSResourceRecord(name: owner, type: DNSRecordType(rawValue: 4242), ttl: 9, data: .raw([0, 1, 2, 0xFF])),
        ]
        let soa = DNSResourceRecord(
            name: try DNSName("example.org"), type: .soa, ttl: 300,
            data: .soa(
                DNSStartOfAuthority(
                    primaryServer: try DNSName("ns.example.org"), responsibleMailbox: try DNSName("admin.example.org"),
                    serial: 2024, refresh: 1, retry: 2, expire: 3, minimum: 60)))
        let message = DNSMessage(
            header: DNSHeader(id: 99, isResponse: true, recursionAvailable: true, responseCode: .noError),
            questions: [DNSQuestion(name: owner, type: .any)], answers: records, authorities: [soa],
            additionals: [.edns(payloadSize: 4096, options: [DNSEDNSOption(code: 10, value: [1, 2, 3, 4, 5, 6, 7, 8])])])
        let wire = message.encoded()
        let decoded = try DNSMessage(decoding: wire)
        #expect(decoded == message)
        #expect(decoded.encoded() == wire)
        guard case .serviceBinding(let binding) = decoded.answers[6].data else {
            Issue.record("HTTPS record did not decode as a service binding")
            return
        }
        #expect(binding.alpnProtocols == ["h3", "h2"])
        #expect(binding.port == 8443)
    }

    @Test func compressesRepeatedSuffixes() throws {
        let name = try DNSName("www.example.com")
        let message = DNSMessage(
            header: DNSHeader(id: 1, isResponse: true),
            questions: [DNSQuestion(name: name, type: .a)],
            answers: [
                DNSResourceRecord(name: name, type: .cname, ttl: 1, data: .cname(try DNSName("cdn.example.com"))),
                DNSResourceRecord(name: try DNSName("CDN.example.com"), type: .a, ttl: 1, data: .a(DNSIPv4Address(1, 2, 3, 4))),
            ])
        let wire = message.encoded()
        // Question name 17 octets; the CNAME owner is a 2-octet pointer; its target "cdn" + a
        // pointer to "example.com" is 6; the A owner "CDN" + pointer is 6 (suffixes match
        // exactly, so the upper-case label is written out and keeps its case).
        #expect(wire.count == 12 + 17 + 4 + (2 + 10 + 6) + (6 + 10 + 4))
        let decoded = try DNSMessage(decoding: wire)
        #expect(decoded == message)
        #expect(decoded.answers[1].name == (try DNSName("CDN.example.com")))
    }

    @Test func namesParseAndPrint() throws {
        #expect(try DNSName("example.com.") == DNSName("example.com"))
        #expect(try DNSName(".") == .root)
        #expect(DNSName.root.description == ".")
        #expect(try DNSName("a.b").description == "a.b")
        #expect(throws: DNSWireError.emptyLabel) { try DNSName("a..b") }
        #expect(throws: DNSWireError.emptyLabel) { try DNSName(".a") }
        #expect(throws: DNSWireError.labelTooLong) { try DNSName(String(repeating: "x", count: 64) + ".com") }
        let longest = Array(repeating: String(repeating: "x", count: 63), count: 3).joined(separator: ".") + "." + String(repeating: "y", count: 61)
        #expect(try DNSName(longest).wireLength == 255)
        #expect(throws: DNSWireError.nameTooLong) { try DNSName(longest + "y") }
        #expect(try DNSName(labels: [[0x2E, 0x00]]).description == "\\046\\000")
    }

    @Test func addressesParseAndPrint() throws {
        #expect(DNSIPv4Address("10.77.0.2")?.description == "10.77.0.2")
        #expect(DNSIPv4Address("10.77.0") == nil)
        #expect(DNSIPv6Address("FD77:0:0::2")?.description == "fd77::2")
        #expect(DNSIPv6Address("fe80::1%eth0") == nil)
        #expect(DNSIPAddress("::1") == .v6(try #require(DNSIPv6Address("::1"))))
        #expect(try DNSIPAddress("127.0.0.1")?.socketAddress(port: 80).port == 80)
    }
}
