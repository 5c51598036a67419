import Foundation
import NetworkCore
import NetworkSync

/// A connection to one endpoint over a protocol stack written as a builder: `NetworkConnection(to:
/// .hostPort(host: "example.com", port: 443)) { TLS() }`.
///
/// Nothing happens until the first send or receive, which starts the connection; sends and
/// receives made while it establishes wait for it. It closes when it is released, when
/// `withNetworkConnection(to:using:_:)` returns, or when a task waiting in one of its
/// sends or receives is cancelled. Observers (``onStateUpdate(_:)`` and the others) run in the
/// isolation of the code that set them, one event at a time.
public final class NetworkConnection<ApplicationProtocol: NetworkProtocolOptions>: NetworkChannel<ApplicationProtocol>,
    @unchecked Sendable
{
    private let observers = Lock(Observers())
    private let pump = LazyEventPump<NetworkConnection<ApplicationProtocol>>()
    /// A multiplexed connection's datagram channel, while someone holds it.
    let multiplexChildren = Lock(MultiplexChildren())

    struct MultiplexChildren {
        weak var datagrams: AnyObject?
    }

    /// An observer: `(connection, value)`, run in the isolation it was written in. Observers
    /// are not `Sendable` (as in Apple's 26 SDK): a closure written in an actor's or the main
    /// actor's code is then isolated to it and may touch its state. Only the connection's pump
    /// calls them, one at a time, each in its own isolation.
    typealias Observer<Value> = UncheckedObserver<NetworkConnection<ApplicationProtocol>, Value>

    private struct Observers {
        var state: Observer<NetworkChannel<ApplicationProtocol>.State>?
        var path: Observer<NWPath>?
        var viability: Observer<Bool>?
        var betterPath: Observer<Bool>?
    }

    /// Wraps `connection` (made for the stack whose top is `applicationProtocol`).
    init(connection: NWConnection, applicationProtocol: ApplicationProtocol, refusal: (any Error)? = nil, accepted: Bool = false) {
        super.init(core: ChannelCore(connection: connection, refusal: refusal, accepted: accepted), applicationProtocol: applicationProtocol)
    }

    /// A connection to `endpoint` with `parameters`, or one that throws `refusal` from its first
    /// use when the endpoint cannot be reached by this module. A multiplexed one (QUIC) stands
    /// for the whole connection, whose streams are connections of their own.
    convenience init(
        endpoint: NWEndpoint?, refusal: (any Error)?, parameters: NWParameters, applicationProtocol: ApplicationProtocol
    ) {
        let target = endpoint ?? .unix(path: "")
        let connection = applicationProtocol is any MultiplexProtocol
            ? NWConnection(multiplexedTo: target, using: parameters) : NWConnection(to: target, using: parameters)
        self.init(connection: connection, applicationProtocol: applicationProtocol, refusal: refusal)
    }

    /// The endpoint a `Connectable` stands for, or the error to throw when this module cannot
    /// reach it.
    static func target(_ provider: any Connectable) -> (NWEndpoint?, (any Error)?) {
        guard let endpoint = provider as? any ConnectableEndpoint else { return (nil, UnexpectedEndpointType(provider)) }
        return (endpoint.connectionEndpoint, nil)
    }

    // MARK: - Observers

    /// Calls `handler` with every state change, in order, in the isolation it was written in.
    /// Setting it does not start the connection; setting another replaces it.
    @discardableResult
    public final func onStateUpdate(
        _ handler: @escaping @isolated(any) (NetworkConnection<ApplicationProtocol>, NetworkChannel<ApplicationProtocol>.State) -> Void
    ) -> Self {
        observers.withLock { $0.state = Observer(handler) }
        let forward = forwarder { $0.state }
        core.observeStates { forward(NetworkChannel<ApplicationProtocol>.State($0)) }
        return self
    }

    /// Calls `handler` when the connection's path becomes known or changes.
    @discardableResult
    public final func onPathUpdate(
        _ handler: @escaping @isolated(any) (NetworkConnection<ApplicationProtocol>, NWPath) -> Void
    ) -> Self {
        observers.withLock { $0.path = Observer(handler) }
        core.connection.pathUpdateHandler = forwarder { $0.path }
        return self
    }

    /// Calls `handler` when the connection stops (false) or starts again (true) being able to
    /// carry data.
    @discardableResult
    public final func onViabilityUpdate(
        _ handler: @escaping @isolated(any) (NetworkConnection<ApplicationProtocol>, Bool) -> Void
    ) -> Self {
        observers.withLock { $0.viability = Observer(handler) }
        core.connection.viabilityUpdateHandler = forwarder { $0.viability }
        return self
    }

    /// Calls `handler` when a better path than the current one appears (true) or goes (false).
    @discardableResult
    public final func onBetterPathUpdate(
        _ handler: @escaping @isolated(any) (NetworkConnection<ApplicationProtocol>, Bool) -> Void
    ) -> Self {
        observers.withLock { $0.betterPath = Observer(handler) }
        core.connection.betterPathUpdateHandler = forwarder { $0.betterPath }
        return self
    }

    /// A function for the engine's handlers that queues each value for the observer `read`
    /// picks (the one set when the value is delivered). It holds the pump, which holds the
    /// connection only weakly.
    private func forwarder<Value: Sendable>(
        _ read: @escaping @Sendable (Observers) -> Observer<Value>?
    ) -> @Sendable (Value) -> Void {
        let pump = pump.pump(for: self)
        return { value in
            pump.enqueue { connection in
                guard let observer = connection.observers.withLock({ read($0) }) else { return }
                await observer.handler(connection, value)
            }
        }
    }

    // MARK: - Life cycle and path

    /// Closes the connection and returns once it is closed and its observers have seen it.
    func closeAndWait() async {
        core.cancel()
        await core.close()
        await pump.existing?.drain()
    }

    /// Abandons the address being tried and moves on to the next one (while connecting).
    public final func tryNextEndpoint() {
        core.connection.cancelCurrentEndpoint()
    }

    /// The path the connection uses while it is ready, nil otherwise.
    public final var currentPath: NWPath? { core.connection.currentPath }

    /// The local address and port, once ready.
    public final var localEndpoint: NWEndpoint? { currentPath?.localEndpoint }

    /// The address and port of the peer: once ready for a connection this side made, at once
    /// for one a listener accepted.
    public final var remoteEndpoint: NWEndpoint? {
        currentPath?.remoteEndpoint ?? (core.accepted ? core.connection.endpoint : nil)
    }
}

extension NetworkConnection where ApplicationProtocol: OneToOneProtocol {
    /// A connection to `endpoint` over the stack `builder` writes (lower layers inferred).
    public convenience init(to endpoint: NWEndpoint, @ProtocolStackBuilder<ApplicationProtocol> using builder: () -> ApplicationProtocol) {
        let top = builder()
        self.init(endpoint: endpoint, refusal: nil, parameters: UnsupportedStackLayer.layer(top).makeParameters(), applicationProtocol: top)
    }

    /// A connection to what a browser found (`Bonjour.Endpoint`), over the stack `builder` writes.
    public convenience init(to provider: any Connectable, @ProtocolStackBuilder<ApplicationProtocol> using builder: () -> ApplicationProtocol) {
        let top = builder()
        let (endpoint, refusal) = Self.target(provider)
        self.init(endpoint: endpoint, refusal: refusal, parameters: UnsupportedStackLayer.layer(top).makeParameters(), applicationProtocol: top)
    }

    /// A connection to `endpoint` with the parameters `builder` makes.
    public convenience init(to endpoint: NWEndpoint, using builder: NWParametersBuilder<ApplicationProtocol>) {
        self.init(endpoint: endpoint, refusal: nil, parameters: builder.parameters, applicationProtocol: builder.stackTop)
    }

    /// A connection to what a browser found, with the parameters `builder` makes.
    public convenience init(to provider: any Connectable, using builder: NWParametersBuilder<ApplicationProtocol>) {
        let (endpoint, refusal) = Self.target(provider)
        self.init(endpoint: endpoint, refusal: refusal, parameters: builder.parameters, applicationProtocol: builder.stackTop)
    }
}

extension NetworkConnection where ApplicationProtocol: MultiplexProtocol {
    /// A multiplexed connection (QUIC) to `endpoint` over the stack `builder` writes.
    public convenience init(to endpoint: NWEndpoint, @ProtocolStackBuilder<ApplicationProtocol> using builder: () -> ApplicationProtocol) {
        let top = builder()
        self.init(endpoint: endpoint, refusal: nil, parameters: UnsupportedStackLayer.layer(top).makeParameters(), applicationProtocol: top)
    }

    /// A multiplexed connection to what a browser found.
    public convenience init(to provider: any Connectable, @ProtocolStackBuilder<ApplicationProtocol> using builder: () -> ApplicationProtocol) {
        let top = builder()
        let (endpoint, refusal) = Self.target(provider)
        self.init(endpoint: endpoint, refusal: refusal, parameters: UnsupportedStackLayer.layer(top).makeParameters(), applicationProtocol: top)
    }

    /// A multiplexed connection to `endpoint` with the parameters `builder` makes.
    public convenience init(to endpoint: NWEndpoint, using builder: NWParametersBuilder<ApplicationProtocol>) {
        self.init(endpoint: endpoint, refusal: nil, parameters: builder.parameters, applicationProtocol: builder.stackTop)
    }

    /// A multiplexed connection to what a browser found, with the parameters `builder` makes.
    public convenience init(to provider: any Connectable, using builder: NWParametersBuilder<ApplicationProtocol>) {
        let (endpoint, refusal) = Self.target(provider)
        self.init(endpoint: endpoint, refusal: refusal, parameters: builder.parameters, applicationProtocol: builder.stackTop)
    }

    /// Starts the connection (multiplexed connections do not start on their own); later calls
    /// are ignored.
    @discardableResult
    public final func start() -> Self {
        core.startIfNeeded()
        return self
    }
}
