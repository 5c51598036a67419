import NIOCore

/// Decides whether bytes received on a query socket are the answer to our query. Anything that
/// fails a check is dropped without a word, so a spoofer gets no feedback and the real answer
/// can still arrive (RFC 5452 section 9).
package struct DNSResponseFilter: Sendable {
    /// The ID of the query.
    package let id: UInt16
    /// The question asked.
    package let question: DNSQuestion
    /// The server asked.
    package let server: SocketAddress

    /// The opcode of every query we send (standard QUERY): a reply with another one (NOTIFY,
    /// UPDATE, …) answers something we never asked.
    private static let queryOpcode: UInt8 = 0

    /// A filter for the reply to one query.
    package init(id: UInt16, question: DNSQuestion, server: SocketAddress) {
        self.id = id
        self.question = question
        self.server = server
    }

    /// What to do with one received message.
    package enum Verdict: Equatable {
        /// Ours; the message decoded fully.
        case accept(DNSMessage)
        /// Ours and truncated, but cut mid-record: only the header and question decoded.
        case truncated
        /// A reply with our ID (and our question, if that much decoded) that is not a valid
        /// message. Over UDP it is dropped like garbage, but remembered: if no valid answer
        /// follows, the lookup says the server's reply was malformed rather than "timed out".
        case malformed
        /// Not ours (or garbage).
        case ignore
    }

    /// Whether `source` is the server we asked: same address and port.
    package func isFromServer(_ source: SocketAddress) -> Bool {
        source.port == server.port && source.ipAddress != nil && source.ipAddress == server.ipAddress
    }

    /// The verdict on one message's bytes.
    package func check(_ bytes: [UInt8]) -> Verdict {
        if let message = try? DNSMessage(decoding: bytes) {
            guard isOurs(message.header) else { return .ignore }
            if message.questions.count == 1, message.questions[0].matches(question) { return .accept(message) }
            // Some servers drop the question from FORMERR/NOTIMP replies; we still need those
            // to retry without EDNS.
            if message.questions.isEmpty,
                message.header.responseCode == .formatError || message.header.responseCode == .notImplemented
            {
                return .accept(message)
            }
            return .ignore
        }
        if let (header, questions) = try? DNSMessage.decodeHeaderAndQuestions(bytes) {
            guard isOurs(header), questions.count == 1, questions[0].matches(question) else { return .ignore }
            return header.isTruncated ? .truncated : .malformed
        }
        // Not even the question decodes: ours only if the header says so.
        guard bytes.count >= 4 else { return .ignore }
        return isOurs(DNSHeader(id: UInt16(bytes[0]) << 8 | UInt16(bytes[1]), flags: UInt16(bytes[2]) << 8 | UInt16(bytes[3])))
            ? .malformed : .ignore
    }

    private func isOurs(_ header: DNSHeader) -> Bool {
        header.isResponse && header.id == id && header.opcode == Self.queryOpcode
    }
}
