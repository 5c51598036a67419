/// When a QUIC listener asks a new client to prove its address with a Retry (RFC 9000, 8.1.2)
/// before it spends a socket, ngtcp2's state and a TLS session on it.
package enum QUICRetryPolicy: Sendable, Equatable {
    /// Never: every acceptable Initial starts a handshake.
    case never
    /// Every new client.
    case always
    /// Once this many handshakes are under way: a flood from forged addresses then costs a
    /// Retry packet each, and cannot fill the listener's handshake slots.
    case whenBusy(handshakes: Int)

    /// Whether a new client must answer a Retry first, with `handshakes` under way.
    func requiresRetry(handshakes: @autoclosure () -> Int) -> Bool {
        switch self {
        case .never: return false
        case .always: return true
        case .whenBusy(let limit): return handshakes() >= limit
        }
    }
}
