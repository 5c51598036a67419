/// A message framer the engine runs for one connection: an application's
/// `NWProtocolFramerImplementation`, as the `Network` module adapts it, or one of the engine's
/// own (`TLVFramer`, for TLV and the Coder). Every call comes on the connection's event loop,
/// with the host the framer works through.
package protocol HostedFramer: AnyObject {
    /// The connection's lower protocols are up. True: ready now; false: the framer will call
    /// `markReady` (or `markFailed`) itself, after a handshake of its own.
    func start(_ host: FramerHost) -> Bool
    /// Bytes arrived; parse and deliver messages. Returns how many bytes it needs before it is
    /// asked again.
    func handleInput(_ host: FramerHost) -> Int
    /// The application sent a message (`message` is its framer metadata, nil for none) of
    /// `length` bytes; write it out.
    func handleOutput(_ host: FramerHost, message: (any AnyObject & Sendable)?, length: Int, isComplete: Bool)
    /// A wake-up the framer scheduled is due.
    func wakeup(_ host: FramerHost)
    /// The connection is closing. True: stop now; false: the framer finishes first and then
    /// calls `markFailed`.
    func stop(_ host: FramerHost) -> Bool
    /// The framer is done for good; release what it holds.
    func cleanup(_ host: FramerHost)
}

/// Makes a connection's framer (one per connection, from the options in its protocol stack).
package protocol HostedFramerFactory: Sendable {
    /// The framer's name in log lines (its implementation's `label`).
    var label: String { get }
    /// A new framer working through `host`.
    func makeFramer(host: FramerHost) -> any HostedFramer
    /// TLS the parameters put right above this framer (`[TLS, framer]` in the application
    /// protocols): it runs as if the framer had prepended it (`FramerHost.prependedTLS`).
    var tlsAbove: FlowTLSConfiguration? { get }
}

extension HostedFramerFactory {
    package var tlsAbove: FlowTLSConfiguration? { nil }
}
