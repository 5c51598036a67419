/// A whole DNS message: header and the four sections. Counts on the wire are derived from the
/// arrays when encoding and checked against the remaining bytes when decoding.
package struct DNSMessage: Hashable, Sendable {
    /// ID and flags.
    package var header: DNSHeader
    /// The question section (one entry in practice).
    package var questions: [DNSQuestion]
    /// The answer section.
    package var answers: [DNSResourceRecord]
    /// The authority section (an SOA here marks an authoritative negative answer).
    package var authorities: [DNSResourceRecord]
    /// The additional section, where the OPT record lives.
    package var additionals: [DNSResourceRecord]

    /// A message from its parts.
    package init(
        header: DNSHeader, questions: [DNSQuestion] = [], answers: [DNSResourceRecord] = [],
        authorities: [DNSResourceRecord] = [], additionals: [DNSResourceRecord] = []
    ) {
        self.header = header
        self.questions = questions
        self.answers = answers
        self.authorities = authorities
        self.additionals = additionals
    }

    /// A recursive query for one question, with an OPT record when `ednsPayloadSize` is given.
    package static func query(id: UInt16, question: DNSQuestion, ednsPayloadSize: UInt16?) -> DNSMessage {
        DNSMessage(
            header: DNSHeader(id: id, recursionDesired: true), questions: [question],
            additionals: ednsPayloadSize.map { [.edns(payloadSize: $0)] } ?? [])
    }

    /// The EDNS UDP payload size the sender advertised, if it sent an OPT record.
    package var ednsPayloadSize: UInt16? {
        additionals.first { $0.type == .opt }.map { $0.recordClass.rawValue }
    }

    /// Smallest possible record: root name (1), type, class, TTL, RDLENGTH (10).
    private static let minimumRecordLength = 11
    /// Smallest possible question: root name (1), type, class.
    private static let minimumQuestionLength = 5

    /// Decodes one message (UDP payload, or a TCP message without its length prefix).
    package init(decoding bytes: [UInt8]) throws(DNSWireError) {
        var reader = DNSReader(bytes)
        let id = try reader.readUInt16()
        let flags = try reader.readUInt16()
        let questionCount = Int(try reader.readUInt16())
        let answerCount = Int(try reader.readUInt16())
        let authorityCount = Int(try reader.readUInt16())
        let additionalCount = Int(try reader.readUInt16())
        // Reject counts that cannot fit before allocating or looping on them.
        let needed = questionCount * Self.minimumQuestionLength
            + (answerCount + authorityCount + additionalCount) * Self.minimumRecordLength
        guard needed <= reader.remaining else { throw .countExceedsMessage }

        header = DNSHeader(id: id, flags: flags)
        questions = []
        questions.reserveCapacity(questionCount)
        for _ in 0..<questionCount {
            let name = try reader.readName()
            let type = DNSRecordType(rawValue: try reader.readUInt16())
            let recordClass = DNSClass(rawValue: try reader.readUInt16())
            questions.append(DNSQuestion(name: name, type: type, recordClass: recordClass))
        }
        answers = try Self.readRecords(answerCount, from: &reader)
        authorities = try Self.readRecords(authorityCount, from: &reader)
        additionals = try Self.readRecords(additionalCount, from: &reader)
        guard reader.remaining == 0 else { throw .trailingBytes }
    }

    private static func readRecords(_ count: Int, from reader: inout DNSReader) throws(DNSWireError) -> [DNSResourceRecord] {
        var records: [DNSResourceRecord] = []
        records.reserveCapacity(count)
        for _ in 0..<count {
            let name = try reader.readName()
            let type = DNSRecordType(rawValue: try reader.readUInt16())
            let recordClass = DNSClass(rawValue: try reader.readUInt16())
            let ttl = try reader.readUInt32()
            let length = Int(try reader.readUInt16())
            let data = try DNSRecordData.decode(type: type, length: length, from: &reader)
            records.append(DNSResourceRecord(name: name, type: type, recordClass: recordClass, ttl: ttl, data: data))
        }
        return records
    }

    /// The wire form, with name compression where RFC 3597 allows it.
    package func encoded() -> [UInt8] {
        var writer = DNSWriter()
        writer.write(header.id)
        writer.write(header.flags)
        writer.write(UInt16(truncatingIfNeeded: questions.count))
        writer.write(UInt16(truncatingIfNeeded: answers.count))
        writer.write(UInt16(truncatingIfNeeded: authorities.count))
        writer.write(UInt16(truncatingIfNeeded: additionals.count))
        for question in questions {
            writer.write(name: question.name, compress: true)
            writer.write(question.type.rawValue)
            writer.write(question.recordClass.rawValue)
        }
        for record in answers + authorities + additionals {
            writer.write(name: record.name, compress: true)
            writer.write(record.type.rawValue)
            writer.write(record.recordClass.rawValue)
            writer.write(record.ttl)
            writer.withLengthPrefix { record.data.encode(into: &$0) }
        }
        return writer.bytes
    }
}

extension DNSMessage {
    /// Decodes only the header and the question section: enough to recognise a truncated
    /// reply whose records were cut off mid-way.
    package static func decodeHeaderAndQuestions(_ bytes: [UInt8]) throws(DNSWireError) -> (DNSHeader, [DNSQuestion]) {
        var reader = DNSReader(bytes)
        let id = try reader.readUInt16()
        let flags = try reader.readUInt16()
        let questionCount = Int(try reader.readUInt16())
        reader.offset += 6
        guard reader.offset <= reader.limit, questionCount * 5 <= reader.remaining else { throw .countExceedsMessage }
        var questions: [DNSQuestion] = []
        for _ in 0..<questionCount {
            let name = try reader.readName()
            let type = DNSRecordType(rawValue: try reader.readUInt16())
            let recordClass = DNSClass(rawValue: try reader.readUInt16())
            questions.append(DNSQuestion(name: name, type: type, recordClass: recordClass))
        }
        return (DNSHeader(id: id, flags: flags), questions)
    }
}
