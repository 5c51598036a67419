import PeerSupport
import Testing
@testable import NetworkDNS

@Suite("Hostile DNS input")
struct HostileInputTests {
    private let header = bytes(hex: "1234 8180 0001 0000 0000 0000")

    @Test func rejectsCompressionLoop() {
        // The question name at offset 12 is a pointer to itself.
        let wire = header + [0xC0, 12, 0, 1, 0, 1]
        #expect(throws: DNSWireError.invalidCompressionPointer(offset: 12)) { try DNSMessage(decoding: wire) }
    }

    @Test func rejectsTwoPointerLoop() {
        // The question's "a" continues with a pointer into the answer, whose owner points
        // back at the question: a cycle of two pointers needs one that points forward, and
        // that one is refused.
        var wire = bytes(hex: "1234 8180 0001 0001 0000 0000")
        wire += [1, 0x61, 0xC0, 18 + 4]  // offset 12: "a" then pointer to offset 22 (forward)
        wire += [0, 1, 0, 1]
        wire += [0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 1, 2, 3, 4]
        #expect(throws: DNSWireError.invalidCompressionPointer(offset: 14)) { try DNSMessage(decoding: wire) }
    }

    @Test func rejectsForwardPointer() {
        let wire = header + [0xC0, 18, 0, 1, 0, 1, 0]
        #expect(throws: DNSWireError.invalidCompressionPointer(offset: 12)) { try DNSMessage(decoding: wire) }
    }

    @Test func rejectsLongLabelsAndNames() {
        // 64 is not a valid label length (the top bits 01 mean an extended label type).
        let extended = header + [64] + Array(repeating: 0x61, count: 64) + [0, 0, 1, 0, 1]
        #expect(throws: DNSWireError.unsupportedLabelType(offset: 12)) { try DNSMessage(decoding: extended) }
        // Five labels of 63 octets: 320 octets of name.
        var long = header
        for _ in 0..<5 { long += [63] + Array(repeating: 0x61, count: 63) }
        long += [0, 0, 1, 0, 1]
        #expect(throws: DNSWireError.nameTooLong) { try DNSMessage(decoding: long) }
        // A name that grows past 255 octets only through pointers.
        var chained = bytes(hex: "1234 8180 0005 0000 0000 0000")
        var previous: Int?
        for _ in 0..<5 {
            let start = chained.count
            chained += [60] + Array(repeating: 0x62, count: 60)
            if let previous { chained += [0xC0 | UInt8(previous >> 8), UInt8(previous & 0xFF)] } else { chained += [0] }
            chained += [0, 1, 0, 1]
            previous = start
        }
        #expect(throws: DNSWireError.nameTooLong) { try DNSMessage(decoding: chained) }
    }

    @Test func rejectsCountsBeyondTheMessage() {
        let wire = bytes(hex: "1234 8180 0001 ffff 0000 0000") + [0, 0, 1, 0, 1]
        #expect(throws: DNSWireError.countExceedsMessage) { try DNSMessage(decoding: wire) }
    }

    @Test func rejectsTruncatedAndMalformedRecords() {
        let question = bytes(hex: "01 61 00 0001 0001")
        let answerHeader = bytes(hex: "1234 8180 0001 0001 0000 0000")
        // RDLENGTH says 8 but only 4 follow.
        let short = answerHeader + question + bytes(hex: "c00c 0001 0001 00000001 0008 01020304")
        #expect(throws: DNSWireError.truncated(offset: 31)) { try DNSMessage(decoding: short) }
        // An A record with 5 octets of RDATA.
        let wrongSize = answerHeader + question + bytes(hex: "c00c 0001 0001 00000001 0005 0102030405")
        #expect(throws: DNSWireError.malformedRecordData(type: 1)) { try DNSMessage(decoding: wrongSize) }
        // A CNAME whose name runs past its RDATA.
        let overrun = answerHeader + question + bytes(hex: "c00c 0005 0001 00000001 0002 0361 6161 00")
        #expect(throws: (any Error).self) { try DNSMessage(decoding: overrun) }
        // Bytes after the last record.
        let trailing = bytes(hex: "1234 8180 0001 0000 0000 0000") + question + [0]
        #expect(throws: DNSWireError.trailingBytes) { try DNSMessage(decoding: trailing) }
        // SVCB port parameter with three octets.
        let svcb = answerHeader + question + bytes(hex: "c00c 0040 0001 00000001 000a 0001 00 0003 0003 010203")
        #expect(throws: DNSWireError.malformedRecordData(type: 64)) { try DNSMessage(decoding: svcb) }
    }

    /// Thousands of random and mutated messages: each must decode or throw, never trap, and
    /// whatever decodes must re-encode and decode to the same value.
    @Test func fuzzRandomAndMutatedMessages() throws {
        var generator = SeededGenerator(state: 0x5EED_D115)
        let seeds: [[UInt8]] = try seedMessages()
        var decoded = 0
        var rejected = 0
        for round in 0..<20_000 {
            var wire: [UInt8]
            if round % 4 == 0 {
                wire = (0..<Int.random(in: 0...600, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                wire = seeds[Int.random(in: 0..<seeds.count, using: &generator)]
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    switch Int.random(in: 0..<5, using: &generator) {
                    case 0 where !wire.isEmpty:  // flip a byte
                        wire[Int.random(in: 0..<wire.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                    case 1 where !wire.isEmpty:  // cut the message short
                        wire.removeLast(Int.random(in: 0...wire.count, using: &generator))
                    case 2:  // insert bytes
                        let at = Int.random(in: 0...wire.count, using: &generator)
                        wire.insert(contentsOf: [0xC0, UInt8.random(in: 0...255, using: &generator)], at: at)
                    case 3 where wire.count > 12:  // big section counts
                        wire[4 + 2 * Int.random(in: 0..<4, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                    default:  // pointer somewhere
                        if wire.count > 14 {
                            let at = Int.random(in: 12..<wire.count - 1, using: &generator)
                            wire[at] = 0xC0 | UInt8.random(in: 0...3, using: &generator)
                            wire[at + 1] = UInt8.random(in: 0...255, using: &generator)
                        }
                    }
                }
            }
            do {
                let message = try DNSMessage(decoding: wire)
                decoded += 1
                // RDATA contents survive a round trip; compression may differ from the input.
                let again = try DNSMessage(decoding: message.encoded())
                #expect(again.answers.map(\.data) == message.answers.map(\.data), "round \(round)")
            } catch {
                rejected += 1
            }
            _ = try? DNSMessage.decodeHeaderAndQuestions(wire)
        }
        #expect(decoded > 100)
        #expect(rejected > 1000)
    }

    private func seedMessages() throws -> [[UInt8]] {
        let name = try DNSName("www.example.com")
        let target = try DNSName("edge.example.com")
        let response = DNSMessage(
            header: DNSHeader(id: 3, isResponse: true),
            questions: [DNSQuestion(name: name, type: .https)],
            answers: [
                DNSResourceRecord(name: name, type: .cname, ttl: 5, data: .cname(target)),
                DNSResourceRecord(
                    name: target, type: .https, ttl: 5,
                    data: .serviceBinding(
                        DNSServiceBinding(priority: 1, targetName: target, parameters: [.alpn([Array("h2".utf8)]), .port(443), .ipv4Hint([DNSIPv4Address(1, 2, 3, 4)])]))),
                DNSResourceRecord(name: target, type: .srv, ttl: 5, data: .srv(DNSServiceRecord(priority: 0, weight: 0, port: 1, target: name))),
                DNSResourceRecord(name: target, type: .txt, ttl: 5, data: .txt([Array("k=v".utf8)])),
                DNSResourceRecord(name: target, type: .aaaa, ttl: 5, data: .aaaa(try #require(DNSIPv6Address("2001:db8::5")))),
            ],
            authorities: [
                DNSResourceRecord(
                    name: try DNSName("example.com"), type: .soa, ttl: 5,
                    data: .soa(DNSStartOfAuthority(primaryServer: name, responsibleMailbox: target, serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5)))
            ],
            additionals: [.edns(payloadSize: 1232)])
        return [
            response.encoded(),
            bytes(hex: "1234 8580 0001 0001 0000 0000 04 6475616c 04 74657374 00 0001 0001 c00c 0001 0001 0000001e 0004 0a4d0002"),
            DNSMessage.query(id: 9, question: DNSQuestion(name: name, type: .a), ednsPayloadSize: 1232).encoded(),
        ]
    }
}
