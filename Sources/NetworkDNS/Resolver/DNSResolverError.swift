/// Why a lookup produced no answer at all. (A name without records is an answer, not an error:
/// see `DNSAnswer.Outcome`.)
package enum DNSResolverError: Error, Hashable, Sendable {
    /// The name cannot be put on the wire (empty label, label > 63, name > 255 octets).
    case invalidName(String)
    /// The configuration has no nameserver.
    case noNameservers
    /// No server answered in time, over all attempts.
    case timedOut
    /// A server answered with a reply that could not be decoded (and no valid one followed).
    case malformedReply
    /// Every server that answered refused or failed (SERVFAIL, REFUSED, NOTIMP, …).
    case serverFailure(DNSResponseCode)
    /// A socket could not be opened, bound or connected, or a TCP server closed early.
    case transportFailure(String)
    /// getaddrinfo (the nsswitch fallback) failed with this EAI_* code.
    case systemResolverFailure(Int32)
    /// The lookup was cancelled.
    case cancelled
}

extension DNSResolverError {
    /// Whether a server answered (with a failure code or an unreadable reply): that says more
    /// than a later server's silence, so it is the error kept.
    var cameFromServer: Bool {
        switch self {
        case .serverFailure, .malformedReply: true
        default: false
        }
    }
}
