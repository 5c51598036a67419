import NIOCore

/// Decides whether bytes received on a query socket are the answer to our query. Anything that
/// fails a check is dropped without a word, so a spoofer gets no feedback and the real answer
/// can still arrive (RFC 5452 section 9).
struct DNSResponseFilter: Sendable {
    let id: UInt16
    let question: DNSQuestion
    let server: SocketAddress

    enum Verdict {
        /// Ours; the message decoded fully.
        case accept(DNSMessage)
        /// Ours and truncated, but cut mid-record: only the header and question decoded.
        case truncated
        /// Not ours (or garbage).
        case ignore
    }

    /// Whether `source` is the server we asked: same address and port.
    func isFromServer(_ source: SocketAddress) -> Bool {
        source.port == server.port && source.ipAddress != nil && source.ipAddress == server.ipAddress
    }

    func check(_ bytes: [UInt8]) -> Verdict {
        if let message = try? DNSMessage(decoding: bytes) {
            guard message.header.isResponse, message.header.id == id else { return .ignore }
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
        guard let (header, questions) = try? DNSMessage.decodeHeaderAndQuestions(bytes), header.isResponse,
            header.isTruncated, header.id == id, questions.count == 1, questions[0].matches(question)
        else { return .ignore }
        return .truncated
    }
}
