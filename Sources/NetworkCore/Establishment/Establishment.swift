#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NetworkDNS

/// One establishment run for an outbound flow: the routes to the target are planned (direct, or
/// through proxies) and tried in order, each by an `AddressRace` over its first hop's addresses;
/// a DIRECT route further down the list joins a proxy route's race after a delay. The first
/// channel whose whole stack is up goes to the flow. Lives on the flow's event loop.
final class Establishment: @unchecked Sendable {
    /// Strong (a weak reference would cost the flow a side table for its whole life); let go of
    /// when the run finishes or is abandoned, as the flow lets go of the run.
    private var flow: Flow?
    /// The flow's number, for log lines.
    private let logID: UInt32
    private let configuration: FlowConfiguration
    private let eventLoop: EventLoop
    private var interfaceIndex: Int?
    private var abandoned = false
    private var started: NIODeadline = .now()

    /// The ways to the target, tried in order.
    private var routes = RouteSequence()
    /// The current route's race.
    private var race: AddressRace?
    /// Idempotent data every TCP attempt writes first (TCP Fast Open puts it in the SYN), and
    /// how many of the flow's queued sends it stands for.
    private var fastOpen: (data: ByteBuffer, sends: Int)?

    /// How long a proxy route runs alone before a DIRECT route further down the list joins the
    /// race (PAC "PROXY …; DIRECT", or a proxy that allows failover): long enough that a working
    /// proxy wins, short enough that a dead or stalled one costs little.
    static let directFallbackDelay: TimeAmount = .milliseconds(500)

    /// The DIRECT route racing the current proxy route, once started.
    private var directRace: Establishment?
    private var directTimer: Scheduled<Void>?
    /// Set on the DIRECT race: where its outcome goes instead of the flow.
    private var reportsTo: ((Establishment, Result<Channel, FlowError>) -> Void)?
    /// The DIRECT race that won, whose facts the report shows.
    private var wonBy: Establishment?
    /// The failure of this establishment's own routes while the DIRECT race still runs.
    private var ownFailure: FlowError?

    init(flow: Flow, configuration: FlowConfiguration) {
        self.flow = flow
        self.logID = flow.logID
        self.configuration = configuration
        self.eventLoop = flow.eventLoop
    }

    /// A DIRECT-only race on behalf of `parent`.
    private init(directFor parent: Establishment) {
        flow = parent.flow
        logID = parent.logID
        configuration = parent.configuration
        eventLoop = parent.eventLoop
        interfaceIndex = parent.interfaceIndex
        reportsTo = { [weak parent] race, result in parent?.directRaceFinished(race, result) }
    }

    // MARK: - What the flow sees

    /// The queued sends the winner has already written.
    var fastOpenSends: Int { winner?.wroteInitialData == true ? fastOpen?.sends ?? 0 : 0 }

    /// Whether any route went through a proxy (the report's `proxyConfigured`).
    var proxyConfigured: Bool { routes.proxyConfigured }

    /// The resolution step, for names only (an address literal involves none, and reports none).
    var resolutionReport: ResolutionReport? {
        if let wonBy { return wonBy.resolutionReport }
        return race?.resolutionReport
    }

    /// The proxy the winner went through.
    var proxyUsed: ProxyDescription? {
        guard wonBy == nil, winner != nil, case .proxy(let proxy) = routes.current else { return nil }
        return proxy
    }

    /// The winner's transport handshake (its connect).
    var handshakeDuration: TimeAmount? {
        if let wonBy { return wonBy.handshakeDuration }
        guard let winner else { return nil }
        return (winner.connected ?? .now()) - winner.started
    }

    var tlsFacts: TLSSessionFacts? { wonBy?.tlsFacts ?? winner?.tlsFacts }
    var webSocketFacts: WebSocketHandshakeFacts? { wonBy?.webSocketFacts ?? winner?.webSocketFacts }
    var tlsHandshakeDuration: TimeAmount? { wonBy?.tlsHandshakeDuration ?? winner?.tlsHandshakeDuration }
    /// The address that won the race.
    var winnerAddress: SocketAddress? { wonBy?.winnerAddress ?? winner?.address }
    /// When the winning attempt began.
    var winnerStartTime: NIODeadline? { wonBy?.winnerStartTime ?? winner?.started }
    /// The winner's socket descriptor when we connected it ourselves (plain TCP), owned by NIO.
    var winnerDescriptor: Int32? { wonBy?.winnerDescriptor ?? winner?.descriptor }

    private var winner: ConnectionAttempt? { race?.winner }

    // MARK: - Running

    func run() {
        do {
            interfaceIndex = try InterfaceSelection.requiredIndex(for: configuration)
        } catch {
            log.debug("required interface unavailable: \(FlowError(error).logDescription)", metadata: logMetadata)
            finish(.failure(FlowError(error)))
            return
        }
        started = .now()
        if configuration.allowFastOpen,
            (configuration.transport == .tcp && configuration.tls == nil) || configuration.quic.carriesEarlyData(configuration.transport)
        {
            fastOpen = flow?.fastOpenData()
        }
        RoutePlanner.routes(for: configuration, on: eventLoop).whenComplete { result in
            guard !self.abandoned else { return }
            switch result {
            case .success(let routes) where !routes.isEmpty:
                self.log.debug("routes: \(routes.map(\.description).joined(separator: ", "))", metadata: self.logMetadata)
                self.routes = RouteSequence(routes)
                self.startRoute(0)
            case .success:
                self.finish(.failure(.posix(ENETUNREACH)))
            case .failure(let error):
                self.log.debug("no routes: \(FlowError(error).logDescription)", metadata: self.logMetadata)
                self.finish(.failure(FlowError(error)))
            }
        }
    }

    /// Gives up on the newest attempt and moves on to the next address.
    func skipCurrent() {
        race?.skipCurrent()
    }

    /// Stops for good: the DNS queries are cancelled and every attempt is closed (one that
    /// completes later is closed too).
    func abandon() {
        guard !abandoned else { return }
        abandoned = true
        flow = nil
        directTimer?.cancel()
        directTimer = nil
        directRace?.abandon()
        race?.cancel()
    }

    /// Starts racing the addresses of route `index`'s first hop: the target itself, or the proxy.
    private func startRoute(_ index: Int) {
        routes.select(index)
        let previous = race
        previous?.cancel()
        let proxy: ProxyDescription?
        let firstHop: FlowTarget
        switch routes.current {
        case .direct:
            proxy = nil
            firstHop = configuration.target
        case .proxy(let server):
            proxy = server
            firstHop = server.server
            scheduleDirectRace()
        }
        log.debug("route \(routes.position): \(routes.current), first hop \(firstHop)", metadata: logMetadata)
        let stack = ClientStackBuilder(
            configuration: configuration, flow: flow, eventLoop: eventLoop, proxy: proxy, fastOpenData: fastOpen?.data,
            establishmentStarted: started, interfaceIndex: interfaceIndex, logMetadata: logMetadata)
        let race = AddressRace(
            route: routes.current, configuration: configuration, stack: stack, interfaceIndex: interfaceIndex,
            logMetadata: logMetadata
        ) { [weak self] outcome in
            guard let self else {
                if case .won(_, let channel) = outcome { channel.close(promise: nil) }
                return
            }
            self.raceEnded(outcome)
        }
        race.resolutionSource = previous?.resolutionSource ?? .query
        self.race = race
        race.start(firstHop)
    }

    private func raceEnded(_ outcome: AddressRace.Outcome) {
        switch outcome {
        case .won(_, let channel):
            finish(.success(channel))
        case .stopped(let error):
            finish(.failure(error))
        case .failed(let error):
            let direct: RouteSequence.DirectRace = directRace != nil ? .running : directTimer != nil ? .scheduled : .none
            switch routes.afterFailure(of: error, directRace: direct) {
            case .tryRoute(let next):
                startRoute(next)
            case .startDirectNow:
                // The proxy failed before DIRECT joined: go direct now.
                directTimer?.cancel()
                startDirectRace()
                ownFailure = error
            case .awaitDirect:
                ownFailure = error
            case .fail:
                finish(.failure(error))
            }
        }
    }

    // MARK: - DIRECT racing a proxy

    /// Starts the DIRECT race after `directFallbackDelay` if a later route is DIRECT and none
    /// runs yet.
    private func scheduleDirectRace() {
        guard reportsTo == nil, directRace == nil, directTimer == nil, routes.directMayJoin else { return }
        directTimer = eventLoop.scheduleTask(in: Self.directFallbackDelay) { [weak self] in
            self?.startDirectRace()
        }
    }

    private func startDirectRace() {
        directTimer = nil
        guard !abandoned, directRace == nil else { return }
        log.debug("DIRECT joins the race against the proxy route", metadata: logMetadata)
        let direct = Establishment(directFor: self)
        directRace = direct
        direct.started = .now()
        direct.startRoute(0)
    }

    private func directRaceFinished(_ race: Establishment, _ result: Result<Channel, FlowError>) {
        guard race === directRace else {
            if case .success(let channel) = result { channel.close(promise: nil) }
            return
        }
        switch result {
        case .success:
            // DIRECT got there first: the proxy route's lookups and attempts stop.
            wonBy = race
            self.race?.cancel()
            finish(result)
        case .failure:
            directRace = nil
            // Both ways failed: report the proxy route's error (the one the user configured).
            if let ownFailure { finish(.failure(ownFailure)) }
        }
    }

    // MARK: - Finishing

    private func finish(_ result: Result<Channel, FlowError>) {
        guard !abandoned else {
            if case .success(let channel) = result { channel.close(promise: nil) }
            return
        }
        abandoned = true
        let flow = self.flow
        self.flow = nil
        switch result {
        case .success: log.debug("establishment succeeded", metadata: logMetadata)
        case .failure(let error): log.debug("establishment failed: \(error.logDescription)", metadata: logMetadata)
        }
        directTimer?.cancel()
        directTimer = nil
        if let race = directRace, race !== wonBy { race.abandon() }
        if let reportsTo {
            reportsTo(self, result)
            return
        }
        if let flow {
            flow.establishmentFinished(self, result: result)
        } else if case .success(let channel) = result {
            channel.close(promise: nil)
        }
    }

    // MARK: - Logging

    private var log: Logger { NetworkLog.establishment }

    /// The flow's name, carried by every line about its establishment.
    private var logMetadata: Logger.Metadata { LogIDs.connectionMetadata(logID) }
}
