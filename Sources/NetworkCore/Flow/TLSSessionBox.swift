/// A flow's negotiated TLS session, boxed: most flows have none, and inline the facts would
/// make every idle flow larger.
final class TLSSessionBox: Sendable {
    let facts: TLSSessionFacts
    init(_ facts: TLSSessionFacts) { self.facts = facts }
}
