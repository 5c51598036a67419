#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import NetworkCore
import NetworkSync

/// A two-way channel to one remote endpoint over a protocol stack (TCP or UDP, with IP below).
///
/// Create it, set its handlers, call ``start(queue:)``; every callback then runs on that queue,
/// in the order the connection produced the events. Nothing is sent or delivered before `start`.
/// Cancel it when done: ``State/cancelled`` is always the last state and releases the handlers.
public final class NWConnection: CustomDebugStringConvertible, CallbackDelivering, @unchecked Sendable {
    /// The remote endpoint given at creation.
    public final let endpoint: NWEndpoint
    /// The parameters given at creation. The connection took a snapshot of their values when it
    /// was created: changing the object afterwards does not affect it. Plain parameters (socket
    /// settings only, as `.tcp` makes) come back as a new copy of equal values on every access:
    /// the connection keeps one copy, shared with other connections, instead of the object.
    public final var parameters: NWParameters {
        SharedParameters.contains(keptParameters) ? keptParameters.copy() : keptParameters
    }
    /// The parameters given, or their shared copy (`SharedParameters`).
    private let keptParameters: NWParameters

    /// The engine flow behind this connection.
    package let flow: Flow
    /// The batcher of the flow's event loop (looked up once: the lookup takes a global lock).
    private let batcher: DeliveryBatcher
    private let shared = Lock(Shared())

    /// The TLS session's facts as the connection became ready (nil before, or without TLS).
    var readySessionFacts: TLSSessionFacts? { shared.withLock { $0.readyFacts?.tlsSession } }
    // (The number in `debugDescription` is the flow's, as in its log lines: a counter of our
    // own would take the connection one malloc size class up.)

    private struct Shared {
        var state: State = .setup
        var stateUpdateHandler: (@Sendable (State) -> Void)?
        /// Path, viability and better-path handlers and their engine subscription: boxed, and
        /// only for connections that set one of them.
        var pathWatch: ConnectionPathWatch?
        /// What the flow knew when it became ready, for readers on any thread (set on `ready`,
        /// kept afterwards).
        var readyFacts: FlowReadyFacts?
        /// Where callbacks go (see `CallbackDelivering`): under this lock rather than in an
        /// object of its own, which would cost every connection a malloc chunk.
        var delivery = CallbackDelivery.initial
    }

    /// Creates an outbound connection to `endpoint`; nothing happens until ``start(queue:)``.
    public init(to endpoint: NWEndpoint, using parameters: NWParameters) {
        self.endpoint = endpoint
        if let shared = SharedParameters.shared(for: parameters) {
            // Shared parameters never change: the flow gets its configuration at `start`, and
            // needs only these two of its values now. (Plain parameters always name TCP or UDP.)
            self.keptParameters = shared
            self.flow = Flow(
                transport: shared.flowTransport ?? .tcp,
                fragmentationDisabled: shared.defaultProtocolStack.ipOptions.disableFragmentation)
        } else {
            // The user's object may change after this: its values are taken now.
            self.keptParameters = parameters
            self.flow = Flow(configuration: Self.flowConfiguration(endpoint, parameters))
        }
        self.batcher = flow.deliveryBatcher
        // The flow is observed from `start` (or a `cancel` before it) on, not from here: until
        // then nothing changes its state, and an unstarted connection nobody holds simply goes
        // away. (Observing it weakly from here would cost every connection a weak-reference
        // side table for its whole life.)
    }

    /// Creates an outbound connection to `host` and `port`.
    public convenience init(host: NWEndpoint.Host, port: NWEndpoint.Port, using parameters: NWParameters) {
        self.init(to: .hostPort(host: host, port: port), using: parameters)
    }

    /// What the flow needs to reach `endpoint` with `parameters`.
    private static func flowConfiguration(_ endpoint: NWEndpoint, _ parameters: NWParameters) -> FlowConfiguration {
        switch endpoint.flowTarget() {
        case .success(let target):
            var configuration = parameters.flowConfiguration(target: target, endpoint: endpoint)
            if case .service(let name, let type, let domain, let interface) = endpoint {
                configuration.addressLookup = MDNSServiceLookup(instance: name, type: type, domain: domain, interfaceName: interface?.name)
            }
            return configuration
        case .failure(let error):
            var configuration = parameters.flowConfiguration(target: .unix(path: ""))
            configuration.unsupported = error
            return configuration
        }
    }

    /// The connection that stands for a QUIC connection group: the QUIC connection itself,
    /// carrying no stream of its own (its streams are connections made from the group).
    init(multiplexedTo endpoint: NWEndpoint, using parameters: NWParameters) {
        self.endpoint = endpoint
        self.keptParameters = parameters
        var configuration = Self.flowConfiguration(endpoint, parameters)
        // The group's own flow carries the connection's datagrams (the group's send and
        // receive handler); its streams are flows of their own.
        configuration.transport = .quicDatagram
        configuration.quic.carryGroupDatagrams()
        self.flow = Flow(configuration: configuration)
        self.batcher = flow.deliveryBatcher
    }

    /// A connection for a new stream of the group that `groupFlow` stands for, with the
    /// group's `parameters` (whose transport options `options` replace, when given).
    init(streamOf groupFlow: Flow, endpoint: NWEndpoint, parameters: NWParameters, options: NWProtocolOptions?) {
        self.endpoint = endpoint
        let parameters = parameters.copy()
        if let options { parameters.defaultProtocolStack.transportProtocol = options }
        self.keptParameters = parameters
        var configuration = Self.flowConfiguration(endpoint, parameters)
        if configuration.unsupported == nil, configuration.transport != .quic {
            // A stream of a QUIC connection is QUIC, whatever other options say.
            configuration.unsupported = .posix(EPROTONOSUPPORT)
        }
        self.flow = groupFlow.makeQUICStreamFlow(configuration: configuration)
        self.batcher = flow.deliveryBatcher
    }

    /// Wraps a flow a listener accepted.
    init(accepted flow: Flow, endpoint: NWEndpoint, parameters: NWParameters) {
        self.endpoint = endpoint
        self.keptParameters = parameters
        self.flow = flow
        self.batcher = flow.deliveryBatcher
        // Observed from `start` or `cancel` on, as an outbound connection.
    }

    // MARK: - Life cycle

    /// Starts establishing the connection; callbacks will run on `queue`. Later calls are ignored.
    public final func start(queue: DispatchQueue) {
        guard startDelivery(queue: queue) else { return }
        observeFlow()
        if SharedParameters.contains(keptParameters) {
            flow.start(configuration: Self.flowConfiguration(endpoint, keptParameters))
        } else {
            flow.start()
        }
    }

    /// From here on the flow reports its states to this connection, and keeps it alive (as
    /// Apple's framework does) until it is cancelled, when the flow drops the handler.
    private func observeFlow() {
        flow.observe { [self] state in self.flowStateChanged(state) }
    }

    /// The queue given to ``start(queue:)``, nil before.
    public final var queue: DispatchQueue? { deliveryQueue }

    /// Tries a waiting connection again now instead of waiting for a network change.
    public final func restart() {
        flow.restart()
    }

    /// Closes the connection gracefully: what was sent while ready still goes out (for up to
    /// 10 s), then a TCP FIN. Pending receives, and sends still waiting for `ready`, complete with
    /// `ECANCELED`, then the state becomes `cancelled`; the other sends complete as they are
    /// written, or with `ECANCELED` if the peer did not take them in time.
    public final func cancel() {
        // Not started: the `cancelled` to come must still reach this connection.
        if deliveryQueue == nil { observeFlow() }
        flow.cancel(force: false)
    }

    /// Closes the connection at once, resetting it (a TCP RST), then reports `cancelled`; sends
    /// not yet written complete with `ECANCELED`.
    public final func forceCancel() {
        if deliveryQueue == nil { observeFlow() }
        flow.cancel(force: true)
    }

    /// While connecting, gives up on the address being tried and moves on to the next one
    /// (or to `waiting` when there is none). Ignored in other states.
    public final func cancelCurrentEndpoint() {
        flow.cancelCurrentEndpoint()
    }

    // MARK: - State and path

    /// The current state.
    public final var state: State { shared.withLock { $0.state } }

    /// Called with every state change.
    @preconcurrency public final var stateUpdateHandler: (@Sendable (State) -> Void)? {
        get { shared.withLock { $0.stateUpdateHandler } }
        set { shared.withLock { $0.stateUpdateHandler = newValue } }
    }

    /// The path the connection uses while it is ready (nil otherwise). Computed when asked, from
    /// the facts kept at `ready` (keeping a path per connection would cost ~300 bytes on every
    /// idle connection); the same answer from any thread, the flow's event loop included.
    public final var currentPath: NWPath? {
        let (state, latest, facts) = shared.withLock { ($0.state, $0.pathWatch?.latestPath, $0.readyFacts) }
        guard state == .ready, let facts else { return nil }
        return latest ?? NWPath(connectionFacts: facts)
    }

    /// Called when the connection's path becomes known or changes.
    @preconcurrency public final var pathUpdateHandler: (@Sendable (NWPath) -> Void)? {
        get { shared.withLock { $0.pathWatch?.pathHandler } }
        set { setPathHandlers { $0.pathHandler = newValue } }
    }

    /// Called when the connection stops (false) or starts again (true) being able to pass data:
    /// the interface that carries it went down, lost its address or came back.
    @preconcurrency public final var viabilityUpdateHandler: (@Sendable (Bool) -> Void)? {
        get { shared.withLock { $0.pathWatch?.viabilityHandler } }
        set { setPathHandlers { $0.viabilityHandler = newValue } }
    }

    /// Called when a better path than the current one appears (true: an interface a new
    /// connection would now prefer, or any usable one when this connection's went away) or goes
    /// away (false).
    @preconcurrency public final var betterPathUpdateHandler: (@Sendable (Bool) -> Void)? {
        get { shared.withLock { $0.pathWatch?.betterPathHandler } }
        set { setPathHandlers { $0.betterPathHandler = newValue } }
    }

    private func setPathHandlers(_ change: (ConnectionPathWatch) -> Void) {
        let startWatching = shared.withLock { shared -> Bool in
            let watch = shared.pathWatch ?? ConnectionPathWatch()
            shared.pathWatch = watch
            change(watch)
            return shared.state == .ready && watch.subscription == nil && !watch.subscribing && watch.hasHandlers
        }
        if startWatching { flow.executeOnLoop { self.watchPath() } }
    }

    /// Follows the path of a ready connection that has path handlers (on the flow's loop).
    private func watchPath() {
        let requirements = keptParameters.pathRequirements
        let subscribe = shared.withLock { shared -> Bool in
            guard shared.state == .ready, let facts = shared.readyFacts, let local = facts.localAddress,
                let watch = shared.pathWatch, watch.hasHandlers, watch.subscription == nil, !watch.subscribing
            else {
                return false
            }
            let remote = facts.remoteAddress
            watch.tracker = ConnectionPathTracker(
                localAddress: local.unmappedBytes,
                overLoopback: remote?.isLoopback ?? false,
                requirements: requirements)
            watch.localEndpoint = NWEndpoint(local)
            watch.remoteEndpoint = remote.flatMap(NWEndpoint.init)
            watch.subscribing = true
            return true
        }
        guard subscribe else { return }
        let subscription = PathSubscription { [weak self] inputs in self?.pathInputs(inputs) }
        // No longer ready (or no longer watching) meanwhile: not kept, and dropping it ends it.
        shared.withLock { shared in
            guard let watch = shared.pathWatch, watch.subscribing, shared.state == .ready else { return }
            watch.subscribing = false
            watch.subscription = subscription
        }
    }

    private func stopWatchingPath() {
        let subscription = shared.withLock { shared -> PathSubscription? in
            defer {
                shared.pathWatch?.subscription = nil
                shared.pathWatch?.subscribing = false
            }
            return shared.pathWatch?.subscription
        }
        subscription?.cancel()
    }

    /// A new configuration snapshot (on the engine's loop): tell the handlers what changed.
    private func pathInputs(_ inputs: PathInputs) {
        guard let watch = shared.withLock({ $0.pathWatch }) else { return }
        watch.inOrder {
            let work = shared.withLock { shared -> [@Sendable () -> Void] in
                guard shared.state == .ready, var tracker = watch.tracker else { return [] }
                let events = tracker.observe(inputs)
                watch.tracker = tracker
                watch.lastInputs = inputs
                return Self.pathWork(events, watch)
            }
            for item in work { deliver(item) }
        }
    }

    /// A QUIC connection moved to `local` (on the flow's loop): its endpoint and path follow,
    /// and the path handlers hear of the new interface.
    private func localAddressMoved(_ local: FlowAddress) {
        let watch = shared.withLock { shared -> ConnectionPathWatch? in
            guard shared.state == .ready else { return nil }
            shared.readyFacts?.movedLocal = local
            return shared.pathWatch
        }
        guard let watch else { return }
        watch.inOrder {
            let work = shared.withLock { shared -> [@Sendable () -> Void] in
                watch.localEndpoint = NWEndpoint(local)
                guard shared.state == .ready, var tracker = watch.tracker, let inputs = watch.lastInputs else { return [] }
                tracker.move(to: local.unmappedBytes)
                let events = tracker.observe(inputs)
                watch.tracker = tracker
                return Self.pathWork(events, watch)
            }
            for item in work { deliver(item) }
        }
    }

    /// The handler calls for path events (under the connection's lock).
    private static func pathWork(_ events: [ConnectionPathTracker.Event], _ watch: ConnectionPathWatch) -> [@Sendable () -> Void] {
        var work: [@Sendable () -> Void] = []
        for event in events {
            switch event {
            case .path(let observation):
                let path = watch.path(observation)
                watch.latestPath = path
                if let handler = watch.pathHandler { work.append { handler(path) } }
            case .viability(let viable):
                if let handler = watch.viabilityHandler { work.append { handler(viable) } }
            case .betterPath(let better):
                if let handler = watch.betterPathHandler { work.append { handler(better) } }
            }
        }
        return work
    }

    /// The largest datagram one send may carry (UDP, or QUIC's datagrams), or the largest single write
    /// for streams; 0 until the connection is ready.
    public final var maximumDatagramSize: Int {
        let transport = flow.transportKind
        return shared.withLock { $0.readyFacts?.maximumDatagramSize(transport: transport) ?? 0 }
    }

    /// Runs on the flow's event loop, in order.
    private func flowStateChanged(_ flowState: FlowConnectionState) {
        let newState = State(flowState)
        var path: NWPath?
        var readyFacts: FlowReadyFacts?
        if flowState == .ready {
            let facts = flow.readyFactsOnLoop()
            readyFacts = facts
            if shared.withLock({ $0.pathWatch?.pathHandler != nil }) {
                path = NWPath(connectionFacts: facts)
            }
        }
        shared.withLock { shared in
            if let readyFacts { shared.readyFacts = readyFacts }
            shared.state = newState
        }
        if readyFacts != nil {
            if flow.transportKind.isQUIC { flow.onLocalAddressMoveOnLoop { [weak self] in self?.localAddressMoved($0) } }
            if shared.withLock({ $0.pathWatch?.hasHandlers == true }) { watchPath() }
        } else {
            stopWatchingPath()
        }
        let readyPath = path
        // In order with send completions, which may come from the sender's thread (see
        // `deliverInOrder`): none may reach the queue before the `ready` it follows.
        deliverInOrder { [self] in
            let handler = self.shared.withLock { $0.stateUpdateHandler }
            if let handler { self.flow.runCallback { handler(newState) } }
            if let path = readyPath, let pathHandler = self.shared.withLock({ $0.pathWatch?.pathHandler }) {
                pathHandler(path)
            }
            // As Apple's framework does, a connection that becomes ready tells its viability
            // handler it is viable; later calls come only with changes.
            if newState == .ready, let viabilityHandler = self.shared.withLock({ $0.pathWatch?.viabilityHandler }) {
                viabilityHandler(true)
            }
            if newState == .cancelled {
                // Nothing follows `cancelled`: drop every handler so captured objects are freed.
                self.shared.withLock {
                    $0.stateUpdateHandler = nil
                    $0.pathWatch = nil
                }
            }
        }
    }

    // MARK: - Delivery

    func withDelivery(_ body: (inout CallbackDelivery) -> Void) {
        shared.withLock { body(&$0.delivery) }
    }

    var deliveryBatcher: DeliveryBatcher? { batcher }

    // MARK: - Metadata

    /// Connection-wide metadata of one protocol in the stack (TCP, UDP, IP, TLS or WebSocket),
    /// nil for others.
    public final func metadata(definition: NWProtocolDefinition) -> NWProtocolMetadata? {
        switch definition {
        case NWProtocolTCP.definition:
            guard flow.transportKind == .tcp else { return nil }
            // Bytes received and not yet read by the application, and bytes it sent that the
            // peer has not acknowledged yet (queued in the flow, in the kernel, or in flight).
            let (receive, send) = flow.tcpBufferFacts(ready: shared.withLock { $0.readyFacts != nil })
            let flow = self.flow
            return NWProtocolTCP.Metadata(availableReceiveBuffer: receive, availableSendBuffer: send) { rate in
                flow.setMaximumPacingRate(bytesPerSecond: rate)
            }
        case NWProtocolUDP.definition:
            return flow.transportKind == .udp ? NWProtocolUDP.Metadata() : nil
        case NWProtocolIP.definition:
            return NWProtocolIP.Metadata()
        case NWProtocolTLS.definition:
            guard let facts = shared.withLock({ $0.readyFacts })?.tlsSession else { return nil }
            return NWProtocolTLS.Metadata(sec_protocol_metadata_t(facts))
        case NWProtocolQUIC.definition:
            guard flow.transportKind.isQUIC, let facts = shared.withLock({ $0.readyFacts })?.tlsSession else { return nil }
            // A group's stream has its own number; a QUIC connection outside a group carries the
            // stream it opened (0, or 2 when unidirectional); a datagram flow has none (0).
            let quic = shared.withLock { $0.readyFacts?.quic }
            return NWProtocolQUIC.Metadata(sec_protocol_metadata_t(facts), connection: quic, flow: flow)
        case NWProtocolWebSocket.definition:
            guard let facts = shared.withLock({ $0.readyFacts })?.webSocketHandshake else { return nil }
            return NWProtocolWebSocket.Metadata(handshake: facts)
        default:
            return nil
        }
    }

    // MARK: - Reports

    /// Asks how establishment went; `completion` gets nil if the connection is not ready yet.
    @preconcurrency public final func requestEstablishmentReport(
        queue: DispatchQueue, completion: @escaping @Sendable (NWConnection.EstablishmentReport?) -> Void
    ) {
        let transport = flow.transportKind
        flow.withReport { report in
            let establishment = report.isReady ? NWConnection.EstablishmentReport(report, transport: transport) : nil
            queue.async { completion(establishment) }
        }
    }

    /// Starts measuring data transfer from now; collect the report later.
    public final func startDataTransferReport() -> NWConnection.PendingDataTransferReport {
        PendingDataTransferReport(connection: self)
    }

    /// A readable summary: the connection's number, endpoint and state.
    public var debugDescription: String {
        "[C\(flow.logID) \(endpoint.debugDescription) \(state)]"
    }
}
