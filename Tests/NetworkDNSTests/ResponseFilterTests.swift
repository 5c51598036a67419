import NIOCore
import Testing
@testable import NetworkDNS

/// `DNSResponseFilter` on replies built byte by byte.
@Suite("DNS response filter")
struct ResponseFilterTests {
    private let question = DNSQuestion(name: try! DNSName("www.example"), type: .a)
    private let server = try! SocketAddress(ipAddress: "127.0.0.1", port: 53)

    private func reply(id: UInt16 = 0x1234, opcode: UInt8 = 0, truncated: Bool = false, answers: [DNSResourceRecord] = []) -> DNSMessage {
        DNSMessage(
            header: DNSHeader(id: id, isResponse: true, opcode: opcode, isTruncated: truncated), questions: [question],
            answers: answers)
    }

    private var filter: DNSResponseFilter { DNSResponseFilter(id: 0x1234, question: question, server: server) }

    @Test func acceptsOurReply() {
        let message = reply()
        #expect(filter.check(message.encoded()) == .accept(message))
    }

    @Test(arguments: [1, 2, 4, 5, 15] as [UInt8])
    func dropsOtherOpcodes(opcode: UInt8) {
        #expect(filter.check(reply(opcode: opcode).encoded()) == .ignore)
    }

    @Test func dropsOtherIDs() {
        #expect(filter.check(reply(id: 0x4321).encoded()) == .ignore)
    }

    /// Our reply with its answer cut off mid-RDATA: malformed, or "ask over TCP" with TC set.
    @Test func cutReplyIsMalformedUnlessTruncated() {
        let record = DNSResourceRecord(name: question.name, type: .a, ttl: 60, data: .a(DNSIPv4Address(192, 0, 2, 1)))
        let cut = Array(reply(answers: [record]).encoded().dropLast(2))
        #expect(filter.check(cut) == .malformed)
        let cutTruncated = Array(reply(truncated: true, answers: [record]).encoded().dropLast(2))
        #expect(filter.check(cutTruncated) == .truncated)
        let cutOther = Array(reply(id: 0x4321, answers: [record]).encoded().dropLast(2))
        #expect(filter.check(cutOther) == .ignore)
    }

    /// Only a header, with our ID and the response bit: malformed; a query with our ID: not ours.
    @Test func bareHeader() {
        #expect(filter.check([0x12, 0x34, 0x81, 0x80, 0, 1]) == .malformed)
        #expect(filter.check([0x12, 0x34, 0x01, 0x00, 0, 1]) == .ignore)
        #expect(filter.check([0x12, 0x34, 0xA9, 0x80]) == .ignore)  // opcode 5
        #expect(filter.check([0x12, 0x34]) == .ignore)
    }
}
