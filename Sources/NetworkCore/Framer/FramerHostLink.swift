import NIOCore

/// What a `FramerHost` works through: the layer above, which takes its messages, and the layer
/// below, which takes its bytes. All calls come on the host's event loop.
package protocol FramerHostLink: AnyObject {
    /// A whole message (with its framer metadata) for the layer above.
    func framerHost(_ host: FramerHost, deliver message: FramedMessage)
    /// Bytes the framer wrote, for the layer below (not flushed yet).
    func framerHost(_ host: FramerHost, write bytes: ByteBuffer, promise: EventLoopPromise<Void>?)
    /// Flushes what was written outside a send (a framer's own handshake, a wake-up).
    func framerHostFlush(_ host: FramerHost)
    /// The framer is not ready yet and waits for input: read even though the flow does not ask.
    func framerHostWantsRead(_ host: FramerHost)
    /// The framer failed (`markFailed`, a message too long): fail and close the connection.
    func framerHost(_ host: FramerHost, failed error: FlowError)
}
