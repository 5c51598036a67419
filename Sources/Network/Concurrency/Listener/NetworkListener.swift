import Dispatch
import Foundation
import NetworkCore
import NetworkSync

/// Accepts connections over a protocol stack written as a builder, and hands each one to the
/// handler of `run(_:)` in a child task of its own.
///
/// The listener binds when `run` starts and stops when `run`'s task is cancelled (its
/// connections' tasks are cancelled with it, and `run` returns once they ended and the socket
/// is closed) or when it fails. A connection handed to the handler stays open after the
/// handler returns for as long as something holds it.
public final class NetworkListener<ApplicationProtocol: NetworkProtocolOptions>: CustomDebugStringConvertible, @unchecked Sendable {
    // (`@unchecked`: the stack value is one of this module's Sendable building blocks; the
    // rest is immutable or under the lock.)
    /// Called with every state change, in the isolation the handler was written in.
    public typealias StateUpdateHandler = @isolated(any) @Sendable (NetworkListener<ApplicationProtocol>, NetworkListener<ApplicationProtocol>.State) -> Void
    /// Called when the Bonjour registration changes.
    public typealias ServiceRegistrationUpdateHandler =
        @isolated(any) @Sendable (NetworkListener<ApplicationProtocol>, NetworkListener<ApplicationProtocol>.ServiceRegistrationChange) -> Void

    /// The classic listener that does the work (made now, so that invalid parameters throw here).
    let listener: NWListener
    private let applicationProtocol: ApplicationProtocol
    private let shared = Lock(Shared())
    private let pump = LazyEventPump<NetworkListener<ApplicationProtocol>>()

    private struct Shared {
        var running = false
        var stateHandler: StateUpdateHandler?
        var registrationHandler: ServiceRegistrationUpdateHandler?
    }

    init(provider: (any ListenerProvider)?, parameters: NWParameters, applicationProtocol: ApplicationProtocol) throws {
        // A port without an address (`localPort(_:)`): listen on every address, both families.
        var port = NWEndpoint.Port.any
        if case .hostPort(let host, let localPort) = parameters.requiredLocalEndpoint, Self.isWildcard(host) {
            parameters.requiredLocalEndpoint = nil
            port = localPort
        }
        listener = try NWListener(using: parameters, on: port)
        if let provider { listener.service = provider.service }
        self.applicationProtocol = applicationProtocol
    }

    private static func isWildcard(_ host: NWEndpoint.Host) -> Bool {
        switch host {
        case .ipv4(let address): address == .any
        case .ipv6(let address): address == .any
        case .name: false
        }
    }

    /// A listener over the stack `builder` writes, advertising what `provider` says (nil: not
    /// advertised), on a port the system chooses.
    public convenience init(
        for provider: (any ListenerProvider)? = nil, @ProtocolStackBuilder<ApplicationProtocol> using builder: () -> ApplicationProtocol
    ) throws {
        let top = builder()
        try self.init(provider: provider, parameters: UnsupportedStackLayer.layer(top).makeParameters(), applicationProtocol: top)
    }

    /// A listener with the parameters `builder` makes (`.localPort(_:)` picks the port).
    public convenience init(for provider: (any ListenerProvider)? = nil, using builder: NWParametersBuilder<ApplicationProtocol>) throws {
        try self.init(provider: provider, parameters: builder.parameters, applicationProtocol: builder.stackTop)
    }

    // MARK: - Properties

    /// How many more connections are accepted (`NWListener.InfiniteConnectionLimit`: no limit);
    /// each accepted connection takes one.
    public final var newConnectionLimit: Int {
        get { listener.newConnectionLimit }
        set { listener.newConnectionLimit = newValue }
    }

    /// Sets ``newConnectionLimit`` and returns the listener.
    @discardableResult
    public func newConnectionLimit(_ limit: Int) -> Self {
        newConnectionLimit = limit
        return self
    }

    /// The port listened on, once ready.
    public final var port: NWEndpoint.Port? { listener.port }

    /// The service advertised, if any.
    public final var service: NWListener.Service? { listener.service }

    /// The listener's state.
    public var state: NetworkListener<ApplicationProtocol>.State { State(listener.state) }

    /// The port and state.
    public var debugDescription: String {
        "[NetworkListener \(port.map { "port \($0)" } ?? "unbound") \(state)]"
    }

    // MARK: - Observers

    /// Calls `handler` with every state change.
    @discardableResult
    public func onStateUpdate(_ handler: @escaping StateUpdateHandler) -> Self {
        shared.withLock { $0.stateHandler = handler }
        return self
    }

    /// Calls `handler` when the Bonjour registration changes (the name the service got, its
    /// removal).
    @discardableResult
    public func onServiceRegistrationUpdate(_ handler: @escaping ServiceRegistrationUpdateHandler) -> Self {
        shared.withLock { $0.registrationHandler = handler }
        let pump = eventPump()
        listener.serviceRegistrationUpdateHandler = { change in
            pump.enqueue { listener in
                guard let handler = listener.shared.withLock({ $0.registrationHandler }) else { return }
                switch change {
                case .add(let endpoint): await handler(listener, .add(endpoint))
                case .remove(let endpoint): await handler(listener, .remove(endpoint))
                }
            }
        }
        return self
    }

    private func eventPump() -> IsolatedEventPump<NetworkListener<ApplicationProtocol>> {
        pump.pump(for: self)
    }

    // MARK: - Running

    /// What the classic listener reports to `run`.
    private enum Event: Sendable {
        case connection(NWConnection)
        case failed(NWError)
    }

    /// Listens, and runs `handler` in a child task for each connection accepted. Returns when
    /// the listener is cancelled; throws its error when it fails, `CancellationError` when the
    /// task running it is cancelled (after the connections' tasks, cancelled too, have ended
    /// and the socket is closed). A handler that throws ends its own connection, not the
    /// listener. `run` may be called once.
    func runListener(_ handler: @escaping @isolated(any) @Sendable (NetworkConnection<ApplicationProtocol>) async throws -> Void) async throws {
        let first = shared.withLock { shared -> Bool in
            defer { shared.running = true }
            return !shared.running
        }
        guard first else { throw NWError.posix(.EALREADY) }
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        let pump = eventPump()
        if ApplicationProtocol.self is any MultiplexProtocol.Type {
            // Each QUIC connection as a whole (its streams come through `inboundStreams`).
            listener.newConnectionGroupHandler = { group in
                guard let connection = group.multiplexConnection else { return group.cancel() }
                continuation.yield(.connection(connection))
            }
        } else {
            listener.newConnectionHandler = { connection in continuation.yield(.connection(connection)) }
        }
        listener.stateUpdateHandler = { state in
            pump.enqueue { listener in
                guard let handler = listener.shared.withLock({ $0.stateHandler }) else { return }
                await handler(listener, State(state))
            }
            switch state {
            case .failed(let error): continuation.yield(.failed(error))
            case .cancelled: continuation.finish()
            case .setup, .waiting, .ready: break
            }
        }
        let listener = self.listener
        let applicationProtocol = self.applicationProtocol
        try await withTaskCancellationHandler {
            try await withThrowingDiscardingTaskGroup { group in
                listener.start(queue: Self.queue)
                for await event in events {
                    switch event {
                    case .connection(let accepted):
                        let connection = NetworkConnection(accepted: accepted, applicationProtocol: applicationProtocol)
                        connection.core.startIfNeeded()
                        // On the connection's loop (see `withClosing`): its sends and receives
                        // cross no thread.
                        group.addTask(executorPreference: connection.core.taskExecutor) {
                            do {
                                try await connection.core.scope.run(cancelling: connection.core) { try await handler(connection) }
                            } catch {
                                // (Its own failure: the connection ends, the listener goes on.)
                                connection.core.cancel()
                            }
                        }
                    case .failed(let error):
                        listener.cancel()
                        throw error
                    }
                }
            }
        } onCancel: {
            listener.cancel()
        }
        if Task.isCancelled { throw CancellationError() }
    }

    /// Where the classic listeners of all async listeners deliver their events.
    private static var queue: DispatchQueue { ChannelCore.queue }
}

extension NetworkListener where ApplicationProtocol: OneToOneProtocol {
    /// Listens, and runs `handler` in a child task for each connection accepted: see the type's
    /// description for when it returns.
    public final func run(_ handler: @escaping @isolated(any) @Sendable (NetworkConnection<ApplicationProtocol>) async throws -> Void) async throws {
        try await runListener(handler)
    }
}

extension NetworkListener where ApplicationProtocol: MultiplexProtocol {
    /// Listens for multiplexed connections (QUIC); each QUIC connection, once its handshake is
    /// done, is handed to `handler` in a child task of its own, where its streams come through
    /// ``NetworkConnection/inboundStreams(_:)``.
    public final func run(_ handler: @escaping @isolated(any) @Sendable (NetworkConnection<ApplicationProtocol>) async throws -> Void) async throws {
        try await runListener(handler)
    }
}

extension NetworkConnection {
    /// Wraps a connection a listener accepted.
    convenience init(accepted connection: NWConnection, applicationProtocol: ApplicationProtocol) {
        self.init(connection: connection, applicationProtocol: applicationProtocol, refusal: nil, accepted: true)
    }
}
