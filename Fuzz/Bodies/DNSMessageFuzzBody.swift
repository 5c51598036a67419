import NIOCore
import NetworkDNS

/// The DNS message codec on one UDP payload: decoding, the header-and-question fallback for
/// truncated replies, the reply filter, and the answer interpreter. A message that decodes must
/// decode to itself again after encoding.
enum DNSMessageFuzzBody {
    /// Larger re-encodings could overflow a 16-bit RDLENGTH once names in RDATA lose their
    /// compression; the codec never re-encodes what it received, so only smaller ones are held to
    /// the round trip.
    private static let roundTripLimit = 16 * 1024
    private static let server = try! SocketAddress(ipAddress: "127.0.0.1", port: 53)

    static func run(_ bytes: [UInt8]) {
        let header = try? DNSMessage.decodeHeaderAndQuestions(bytes)
        if let message = try? DNSMessage(decoding: bytes) {
            if bytes.count <= roundTripLimit {
                let again = try? DNSMessage(decoding: message.encoded())
                FuzzFailure.check(again == message, "DNS message changed in a decode-encode-decode round trip")
            }
            for question in message.questions.prefix(4) {
                let interpretation = DNSAnswerInterpreter(
                    response: message, name: question.name, type: question.type, recordClass: question.recordClass,
                    maximumNegativeTTL: 3600, defaultNegativeTTL: 60)
                FuzzFailure.check(
                    interpretation.outcome != .records || !interpretation.records.isEmpty, "records outcome without records")
            }
            _ = message.questions.map(\.name.description)
            FuzzFailure.check(header != nil, "a message decodes but its header and questions do not")
        }
        if let (header, questions) = header, let question = questions.first {
            let filter = DNSResponseFilter(id: header.id, question: question, server: server)
            if case .accept(let message) = filter.check(bytes) {
                FuzzFailure.check(message.header.isResponse && message.header.opcode == 0, "filter accepted a non-reply")
            }
        }
    }
}
