#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import NetworkCore
import NetworkSync

/// Accepts incoming connections on a local port for a protocol stack (TCP or UDP).
///
/// Each new connection reaches ``newConnectionHandler`` in the `setup` state and does nothing
/// until you start it. A UDP listener uses one socket: each remote address becomes one
/// connection, and its replies leave from the listener's port.
public final class NWListener: CustomDebugStringConvertible, CallbackDelivering, @unchecked Sendable {
    /// A value of ``newConnectionLimit`` that means "no limit" (the C constant's value, UINT32_MAX).
    public static let InfiniteConnectionLimit: Int = Int(UInt32.max)

    /// The parameters given at creation.
    public final let parameters: NWParameters

    package let engine: FlowListener
    let shared = Lock(Shared())
    private let requestedPort: NWEndpoint.Port

    struct Shared {
        var state: State = .setup
        var stateUpdateHandler: (@Sendable (State) -> Void)?
        var newConnectionHandler: (@Sendable (NWConnection) -> Void)?
        var newConnectionGroupHandler: (@Sendable (NWConnectionGroup) -> Void)?
        var serviceRegistrationUpdateHandler: (@Sendable (ServiceRegistrationChange) -> Void)?
        var service: Service?
        /// The engine's token for the service being advertised, while it is.
        var advertisement: Int?
        /// Where callbacks go (see `CallbackDelivering`).
        var delivery = CallbackDelivery.initial
    }

    /// Creates a listener for `parameters` on `port` (`.any` lets the system choose). A
    /// `requiredLocalEndpoint` of `.unix(path:)` listens on that UNIX-domain socket path instead
    /// (TCP parameters, port `.any`). Throws `NWError.posix(.EINVAL)` when the parameters name no
    /// transport this build runs, or a local endpoint it cannot listen on.
    public convenience init(using parameters: NWParameters, on port: NWEndpoint.Port = .any) throws {
        try self.init(using: parameters, on: port, quicRetry: nil)
    }

    /// The initializer, with when a QUIC listener asks clients for a Retry (nil: the engine's
    /// default, once 64 handshakes are under way; tests force it).
    init(using parameters: NWParameters, on port: NWEndpoint.Port, quicRetry: QUICRetryPolicy?) throws {
        self.parameters = parameters.copy()
        var configuration = try Self.engineConfiguration(for: self.parameters, on: port)
        self.requestedPort = NWEndpoint.Port(rawValue: UInt16(clamping: configuration.port)) ?? .any
        if let quicRetry { configuration.quicRetry = quicRetry }
        self.engine = FlowListener(configuration: configuration)
    }

    /// The engine's configuration for a socket listening with `parameters` on `port` (a
    /// listener's, or a multicast group's). Throws `NWError.posix(.EINVAL)` as the initializer does.
    static func engineConfiguration(for parameters: NWParameters, on port: NWEndpoint.Port) throws -> FlowListenerConfiguration {
        guard let transport = parameters.flowTransport else { throw NWError.posix(.EINVAL) }
        var bindHost: String?
        var bindInterface: String?
        var bindPath: String?
        var bindPort = port
        if case .unix(let path) = parameters.requiredLocalEndpoint {
            // A UNIX-domain socket (streams only): the path is the address, there is no port.
            guard transport == .tcp, port == .any, !path.isEmpty else { throw NWError.posix(.EINVAL) }
            bindPath = path
        } else if let local = parameters.requiredLocalEndpoint {
            guard case .hostPort(let host, let localPort) = local else { throw NWError.posix(.EINVAL) }
            switch host {
            case .ipv4(let address): bindHost = address.presentation
            case .ipv6(let address):
                bindHost = address.presentation
                bindInterface = address.interface?.name
            case .name(let name, _):
                if name == "localhost" { bindHost = "127.0.0.1" } else { throw NWError.posix(.EINVAL) }
            }
            if port == .any { bindPort = localPort }
        }
        var child = parameters.flowConfiguration(target: .unix(path: ""), listener: true)
        child.transport = transport
        var configuration = FlowListenerConfiguration(transport: transport, port: Int(bindPort.rawValue), child: child)
        configuration.localHost = bindHost
        configuration.localInterfaceName = bindInterface
        configuration.localUnixPath = bindPath
        configuration.allowLocalEndpointReuse = parameters.allowLocalEndpointReuse
        configuration.acceptLocalOnly = parameters.acceptLocalOnly
        configuration.unsupported = child.unsupported
        return configuration
    }

    /// Creates a listener that advertises `service` by Bonjour once ready (on a port the system
    /// chooses).
    public convenience init(service: NWListener.Service, using parameters: NWParameters) throws {
        try self.init(using: parameters, on: .any)
        self.service = service
    }

    // MARK: - Life cycle

    /// Binds and starts accepting; callbacks run on `queue`. Later calls are ignored.
    public final func start(queue: DispatchQueue) {
        guard startDelivery(queue: queue) else { return }
        // (A QUIC listener with a group handler at start hands over whole connections.)
        var groups: (@Sendable (Flow, FlowAddress?) -> Void)?
        if shared.withLock({ $0.newConnectionGroupHandler != nil }) {
            groups = { [self] flow, remote in self.acceptedGroup(flow, remote: remote) }
        }
        engine.startAccepting(
            stateHandler: { [self] state in self.engineStateChanged(state) },
            newConnectionHandler: { [self] flow, remote in self.accepted(flow, remote: remote) },
            newGroupHandler: groups
        )
    }

    /// The queue given to ``start(queue:)``, nil before.
    public final var queue: DispatchQueue? { deliveryQueue }

    /// Stops listening. Connections already handed out are not affected.
    public final func cancel() {
        engine.cancel()
    }

    /// The current state.
    public final var state: State { shared.withLock { $0.state } }

    /// Called with every state change.
    @preconcurrency public final var stateUpdateHandler: (@Sendable (State) -> Void)? {
        get { shared.withLock { $0.stateUpdateHandler } }
        set { shared.withLock { $0.stateUpdateHandler = newValue } }
    }

    /// Called with each new inbound connection, in the `setup` state: start it (or cancel it).
    @preconcurrency public final var newConnectionHandler: (@Sendable (NWConnection) -> Void)? {
        get { shared.withLock { $0.newConnectionHandler } }
        set { shared.withLock { $0.newConnectionHandler = newValue } }
    }

    /// QUIC listeners: called with each QUIC connection a client makes, as a group in `setup`
    /// (start it; the streams the client opens reach its ``NWConnectionGroup/newConnectionHandler``).
    /// Set it before ``start(queue:)``: a listener started with it hands over whole connections,
    /// one started without it hands each stream to ``newConnectionHandler``.
    @preconcurrency public final var newConnectionGroupHandler: (@Sendable (NWConnectionGroup) -> Void)? {
        get { shared.withLock { $0.newConnectionGroupHandler } }
        set { shared.withLock { $0.newConnectionGroupHandler = newValue } }
    }

    /// How many more connections the listener accepts; each accepted connection takes one.
    /// At 0 the listener stops accepting (peers wait in the backlog) until you raise it again.
    /// ``InfiniteConnectionLimit`` (the default) means no limit.
    public final var newConnectionLimit: Int {
        get {
            let limit = engine.connectionLimit
            return limit == FlowListener.infiniteLimit ? Self.InfiniteConnectionLimit : limit
        }
        set {
            engine.connectionLimit = newValue == Self.InfiniteConnectionLimit || newValue < 0
                ? FlowListener.infiniteLimit : newValue
        }
    }

    /// The local port: the bound one once ready, the requested one before (nil for `.any`).
    public final var port: NWEndpoint.Port? {
        if let bound = engine.port { return NWEndpoint.Port(rawValue: UInt16(bound)) }
        return requestedPort == .any ? nil : requestedPort
    }

    /// The Bonjour service the listener advertises while it is ready (mDNS in `local.`). May be
    /// changed at any time: a new TXT record alone is announced under the same name, anything
    /// else advertises anew; nil stops advertising.
    public final var service: Service? {
        get { shared.withLock { $0.service } }
        set { serviceChanged(to: newValue) }
    }

    /// Called with the name the service is registered under (`add`, again with the new name
    /// after a rename) and when that name goes away (`remove`).
    @preconcurrency public final var serviceRegistrationUpdateHandler: (@Sendable (ServiceRegistrationChange) -> Void)? {
        get { shared.withLock { $0.serviceRegistrationUpdateHandler } }
        set { shared.withLock { $0.serviceRegistrationUpdateHandler = newValue } }
    }

    // MARK: - Engine events (listener event loop)

    private func engineStateChanged(_ engineState: FlowListenerState) {
        let newState = State(engineState)
        shared.withLock { $0.state = newState }
        advertiseIfReady()
        deliver { [self] in
            let handler = self.shared.withLock { $0.stateUpdateHandler }
            handler?(newState)
            if newState == .cancelled {
                self.shared.withLock {
                    $0.stateUpdateHandler = nil
                    $0.newConnectionHandler = nil
                    $0.newConnectionGroupHandler = nil
                    $0.serviceRegistrationUpdateHandler = nil
                }
            }
        }
    }

    /// The endpoint of an inbound peer (the unspecified one when the engine has none).
    private static func endpoint(_ address: FlowAddress?) -> NWEndpoint {
        address.flatMap { NWEndpoint($0) } ?? .hostPort(host: .ipv4(.any), port: .any)
    }

    private func accepted(_ flow: Flow, remote address: FlowAddress?) {
        // Inbound connections share the listener's parameters object (its snapshot is already taken).
        let connection = NWConnection(accepted: flow, endpoint: Self.endpoint(address), parameters: parameters)
        deliver { [self] in
            guard let handler = self.shared.withLock({ $0.newConnectionHandler }) else {
                // Nobody takes it: close it rather than leak it.
                connection.cancel()
                return
            }
            handler(connection)
        }
    }

    /// A QUIC connection a client made, as a group whose streams are connections.
    private func acceptedGroup(_ flow: Flow, remote address: FlowAddress?) {
        let group = NWConnectionGroup(accepted: flow, endpoint: Self.endpoint(address), parameters: parameters)
        deliver { [self] in
            guard let handler = self.shared.withLock({ $0.newConnectionGroupHandler }) else {
                group.cancel()
                return
            }
            handler(group)
        }
    }

    // MARK: - Delivery

    func withDelivery(_ body: (inout CallbackDelivery) -> Void) {
        shared.withLock { body(&$0.delivery) }
    }

    /// Listener events are few: each goes to the queue on its own.
    var deliveryBatcher: DeliveryBatcher? { nil }

    /// A readable summary: the port and state.
    public var debugDescription: String {
        "[Listener port \(port.map { "\($0.rawValue)" } ?? "any") \(state)]"
    }
}
