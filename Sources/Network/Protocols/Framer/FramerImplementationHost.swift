import NetworkCore

/// The application's framer class as the engine runs it: one per connection, made by
/// `FramerStackEntry`, turning the engine's calls into the implementation's and the engine's
/// message metadata into ``NWProtocolFramer/Message``s.
final class FramerImplementationHost: HostedFramer {
    private let implementation: any NWProtocolFramerImplementation
    private let instance: NWProtocolFramer.Instance

    init(host: FramerHost, options: NWProtocolFramer.Options, parameters: NWParameters?, side: FramerConnectionSide) {
        instance = NWProtocolFramer.Instance(host: host, options: options, parameters: parameters, side: side)
        implementation = options.framerDefinition.implementation.init(framer: instance)
    }

    func start(_ host: FramerHost) -> Bool {
        implementation.start(framer: instance) == .ready
    }

    func handleInput(_ host: FramerHost) -> Int {
        implementation.handleInput(framer: instance)
    }

    func handleOutput(_ host: FramerHost, message: (any AnyObject & Sendable)?, length: Int, isComplete: Bool) {
        // A send without framer metadata still gets a message: the framer's own, empty.
        let framed = (message as? NWProtocolFramer.Message) ?? NWProtocolFramer.Message(instance: instance)
        implementation.handleOutput(framer: instance, message: framed, messageLength: length, isComplete: isComplete)
    }

    func wakeup(_ host: FramerHost) {
        implementation.wakeup(framer: instance)
    }

    func stop(_ host: FramerHost) -> Bool {
        implementation.stop(framer: instance)
    }

    func cleanup(_ host: FramerHost) {
        implementation.cleanup(framer: instance)
    }
}

/// A framer in a connection's protocol stack, as the engine's configuration carries it: makes
/// each connection's `FramerImplementationHost`.
struct FramerStackEntry: HostedFramerFactory, @unchecked Sendable {
    // (Options and parameters are lock-protected classes, safe to share.)
    let options: NWProtocolFramer.Options
    let parameters: NWParameters?
    /// Which side of which connection the framer runs on (for TLS it prepends).
    var side = FramerConnectionSide(peerHostName: nil, listener: false)
    /// TLS the parameters put right above this framer.
    var tlsAbove: FlowTLSConfiguration?

    var label: String { options.framerDefinition.name }

    func makeFramer(host: FramerHost) -> any HostedFramer {
        FramerImplementationHost(host: host, options: options, parameters: parameters, side: side)
    }
}
