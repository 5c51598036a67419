/// One family's outcome in an address lookup. The two events of a lookup (AAAA and A) arrive
/// separately, in whatever order the answers do, so the Happy Eyeballs racer can start on the
/// first and apply its resolution delay to the second.
package enum DNSAddressLookupEvent: Sendable {
    /// The answer for `.aaaa` or `.a` (see `answer.question.type`), possibly empty.
    case answer(DNSAnswer)
    /// The lookup for this type failed (timeout, server failure, …).
    case failure(DNSRecordType, DNSResolverError)

    /// Which query the event belongs to.
    package var type: DNSRecordType {
        switch self {
        case .answer(let answer): answer.question.type
        case .failure(let type, _): type
        }
    }
}
