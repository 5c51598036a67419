/// Which end of a WebSocket connection this is: a client masks what it sends and must receive
/// unmasked frames; a server the other way round (RFC 6455 §5.1).
package enum WebSocketRole: Sendable, Hashable {
    case client
    case server
}
