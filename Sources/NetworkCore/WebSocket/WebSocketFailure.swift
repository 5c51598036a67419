#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the WebSocket layer ends a connection on its own: the status code it sends the peer in
/// its close frame, and the error the connection fails with.
package enum WebSocketFailure: Error, Equatable, Sendable {
    /// The peer broke the framing rules (1002).
    case protocolError
    /// A text message or a close reason that is not UTF-8 (1007).
    case invalidPayload
    /// A message over `maximumMessageSize` (1009).
    case messageTooBig

    /// The status code of the close frame sent to the peer.
    package var closeCode: UInt16 {
        switch self {
        case .protocolError: return 1002
        case .invalidPayload: return 1007
        case .messageTooBig: return 1009
        }
    }

    /// What the connection fails with (as framers do for an oversized message: EMSGSIZE).
    package var flowError: FlowError {
        switch self {
        case .protocolError: return .posix(EPROTO)
        case .invalidPayload: return .posix(EBADMSG)
        case .messageTooBig: return .posix(EMSGSIZE)
        }
    }
}
