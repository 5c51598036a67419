import NIOCore

/// What a proxy handshake wants done after an event.
package enum ProxyHandshakeAction: Sendable, Equatable {
    /// Send these bytes to the proxy, then wait for its answer.
    case write(ByteBuffer)
    /// Nothing to do until more bytes arrive.
    case waitForData
    /// The tunnel is up. Bytes still in the buffer given to `received` came from the far end
    /// through the tunnel and belong to the layer above.
    case established
    /// The proxy cannot be used; the connection to it is useless and should be closed.
    case failed(ProxyError)
}

/// The client side of a proxy protocol as a value-type state machine: no I/O, one mutating
/// method per event, each returning the action to take. ``ProxyTunnelHandler`` drives it over a
/// channel; unit tests drive it with bytes.
package protocol ProxyHandshake: Sendable {
    /// The connection to the proxy is up: what to send first.
    mutating func start() -> ProxyHandshakeAction

    /// Bytes arrived from the proxy. `buffer` holds everything received and not consumed yet;
    /// the handshake consumes (reads) only whole messages and leaves the rest in place.
    mutating func received(_ buffer: inout ByteBuffer) -> ProxyHandshakeAction
}
