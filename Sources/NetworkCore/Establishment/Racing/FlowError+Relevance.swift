#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension FlowError {
    /// How much an attempt's error tells the user, when several attempts failed and one error
    /// must stand for them all. A server that answered says more than one that did not, and a
    /// family with no route at all says least: on a host without IPv6, "no route" is the normal
    /// state of every AAAA address and hides what went wrong with the address that mattered.
    ///
    /// 4: TLS (a server was reached and the handshake failed); 3: refused (a host answered);
    /// 2: anything else (timeouts, resets, DNS); 1: no route, no usable local address;
    /// 0: cancelled (we gave up on it ourselves: `cancelCurrentEndpoint`).
    var relevance: Int {
        switch self {
        case .tls:
            return 4
        case .posix(ECONNREFUSED):
            return 3
        case .posix(ENETUNREACH), .posix(EHOSTUNREACH), .posix(ENETDOWN), .posix(EHOSTDOWN), .posix(EADDRNOTAVAIL),
            .posix(EAFNOSUPPORT):
            return 1
        case .posix(ECANCELED):
            return 0
        case .posix, .dns:
            return 2
        }
    }

    /// The error to report between the one kept so far and a new one: the more relevant, and
    /// on a tie the newer (the latest attempt is the one the user saw last).
    static func moreRelevant(_ kept: FlowError?, _ new: FlowError) -> FlowError {
        guard let kept else { return new }
        return new.relevance >= kept.relevance ? new : kept
    }
}
