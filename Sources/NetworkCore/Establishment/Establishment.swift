#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NIOPosix
import NetworkDNS
import NetworkSystem

/// One establishment run for an outbound flow: resolve the target and race connection attempts
/// to its addresses (Happy Eyeballs). The rules live in `HappyEyeballsRacer`, a value type; this
/// class is its edge: it feeds it answers, timer firings and attempt outcomes, and carries out
/// what it asks for (open an attempt, arm the timer, close a loser, hand the winner to the flow).
/// An attempt is the whole stack: the connect, then the TLS handshake when the flow has TLS.
/// Lives on the flow's event loop.
final class Establishment: @unchecked Sendable {
    /// One connection attempt: its socket (once NIO created it) and how far it got. Touched on
    /// the event loop only, like the establishment itself.
    private final class Attempt: @unchecked Sendable {
        let address: SocketAddress
        let started: NIODeadline
        var channel: Channel?
        /// Set when the racer gave up on it; a socket that shows up later is closed at once.
        var cancelled = false
        /// When the transport connected (before any TLS handshake).
        var connected: NIODeadline?
        var tlsFacts: TLSSessionFacts?
        var tlsHandshakeDuration: TimeAmount?
        /// Whether it wrote the Fast Open data first.
        var wroteInitialData = false

        init(address: SocketAddress, started: NIODeadline) {
            self.address = address
            self.started = started
        }
    }

    private typealias Racer = HappyEyeballsRacer

    private weak var flow: Flow?
    /// The flow's number, for log lines.
    private let logID: UInt32
    private let configuration: FlowConfiguration
    private let eventLoop: EventLoop
    private var racer: Racer
    private var attempts: [Racer.AttemptID: Attempt] = [:]
    private var timer: Scheduled<Void>?
    private var interfaceIndex: Int?
    private var abandoned = false
    /// Racer events raised while the actions of an earlier one are being carried out (a connect
    /// can fail synchronously) wait here, so the racer sees events one at a time, in order.
    private var queuedEvents: [(inout Racer) -> [Racer.Action]] = []
    private var isPerforming = false

    // What the establishment report needs.
    private var started: NIODeadline = .now()
    private var resolutionStarted: NIODeadline = .now()
    private var resolvedName = false
    private var resolvedCount = 0
    private var resolutionEnded: NIODeadline?
    private var firstTried: SocketAddress?
    private var winner: Attempt?
    /// Idempotent data every TCP attempt writes first (TCP Fast Open puts it in the SYN), and
    /// how many of the flow's queued sends it stands for.
    private var fastOpen: (data: ByteBuffer, sends: Int)?
    /// The queued sends the winner has already written.
    var fastOpenSends: Int { winner?.wroteInitialData == true ? fastOpen?.sends ?? 0 : 0 }

    /// The ways to the target (direct, or through a proxy), tried in order; the race runs
    /// over the addresses of the current one's first hop.
    private var routes: [ProxyRoute] = [.direct]
    private var routeIndex = 0
    /// The proxy the current route goes through, if any.
    private var currentProxy: ProxyDescription?
    /// Whether any route went through a proxy (the report's `proxyConfigured`).
    private(set) var proxyConfigured = false
    /// Where the winning route's answers came from.
    private var resolutionSource: ResolutionSource = .query

    init(flow: Flow, configuration: FlowConfiguration) {
        self.flow = flow
        self.logID = flow.logID
        self.configuration = configuration
        self.eventLoop = flow.eventLoop
        self.racer = Racer(settings: .init(connectionAttemptDelay: configuration.connectionAttemptDelay))
    }

    // MARK: - DIRECT racing a proxy

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

    /// A DIRECT-only race on behalf of `parent`.
    private init(directFor parent: Establishment) {
        flow = parent.flow
        logID = parent.logID
        configuration = parent.configuration
        eventLoop = parent.eventLoop
        racer = Racer(settings: .init(connectionAttemptDelay: parent.configuration.connectionAttemptDelay))
        routes = [.direct]
        fastOpen = nil
    }

    /// Starts the DIRECT race if a later route is DIRECT and none runs yet.
    private func scheduleDirectRace(after index: Int) {
        guard reportsTo == nil, directRace == nil, directTimer == nil,
            routes[(index + 1)...].contains(.direct)
        else { return }
        directTimer = eventLoop.scheduleTask(in: Self.directFallbackDelay) { [weak self] in
            self?.startDirectRace()
        }
    }

    private func startDirectRace() {
        directTimer = nil
        guard !abandoned, directRace == nil else { return }
        log.debug("DIRECT joins the race against the proxy route", metadata: logMetadata)
        let direct = Establishment(directFor: self)
        direct.reportsTo = { [weak self] race, result in self?.directRaceFinished(race, result) }
        directRace = direct
        direct.interfaceIndex = interfaceIndex
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
            // DIRECT got there first: the proxy route's attempts are closed.
            wonBy = race
            raise { $0.cancel() }
            finish(result)
        case .failure:
            directRace = nil
            // Both ways failed: report the proxy route's error (the one the user configured).
            if let ownFailure { finish(.failure(ownFailure)) }
        }
    }

    /// The resolution step, for names only (an address literal involves none, and reports none).
    var resolutionReport: ResolutionReport? {
        if let wonBy { return wonBy.resolutionReport }
        guard resolvedName else { return nil }
        return ResolutionReport(
            duration: (resolutionEnded ?? .now()) - resolutionStarted, endpointCount: resolvedCount,
            successful: winner?.address, preferred: firstTried, fromLiteral: false, source: resolutionSource)
    }

    /// The proxy the winner went through.
    var proxyUsed: ProxyDescription? { wonBy != nil || winner == nil ? nil : currentProxy }

    /// The winner's transport handshake (its connect).
    var handshakeDuration: TimeAmount? {
        if let wonBy { return wonBy.handshakeDuration }
        guard let winner else { return nil }
        return (winner.connected ?? .now()) - winner.started
    }

    var tlsFacts: TLSSessionFacts? { wonBy?.tlsFacts ?? winner?.tlsFacts }
    var tlsHandshakeDuration: TimeAmount? { wonBy?.tlsHandshakeDuration ?? winner?.tlsHandshakeDuration }
    /// The address that won the race.
    var winnerAddress: SocketAddress? { wonBy?.winnerAddress ?? winner?.address }
    /// When the winning attempt began.
    var winnerStartTime: NIODeadline? { wonBy?.winnerStartTime ?? winner?.started }

    func run() {
        do {
            interfaceIndex = try InterfaceSelection.requiredIndex(for: configuration)
        } catch {
            log.debug("required interface unavailable: \(FlowError(error).logDescription)", metadata: logMetadata)
            finish(.failure(FlowError(error)))
            return
        }
        started = .now()
        if configuration.transport == .tcp, configuration.allowFastOpen, configuration.tls == nil {
            fastOpen = flow?.fastOpenData()
        }
        RoutePlanner.routes(for: configuration, on: eventLoop).whenComplete { result in
            guard !self.abandoned else { return }
            switch result {
            case .success(let routes) where !routes.isEmpty:
                self.log.debug("routes: \(routes.map(\.description).joined(separator: ", "))", metadata: self.logMetadata)
                self.routes = routes
                self.proxyConfigured = routes.contains { $0 != .direct }
                self.startRoute(0)
            case .success:
                self.finish(.failure(.posix(ENETUNREACH)))
            case .failure(let error):
                self.log.debug("no routes: \(FlowError(error).logDescription)", metadata: self.logMetadata)
                self.finish(.failure(FlowError(error)))
            }
        }
    }

    /// Starts racing the addresses of route `index`'s first hop: the target itself, or the proxy.
    private func startRoute(_ index: Int) {
        routeIndex = index
        racer = Racer(settings: .init(connectionAttemptDelay: configuration.connectionAttemptDelay))
        timer?.cancel()
        timer = nil
        resolvedName = false
        resolvedCount = 0
        resolutionEnded = nil
        firstTried = nil
        resolutionStarted = .now()
        let firstHop: FlowTarget
        switch routes[index] {
        case .direct:
            currentProxy = nil
            firstHop = configuration.target
        case .proxy(let proxy):
            currentProxy = proxy
            firstHop = proxy.server
            scheduleDirectRace(after: index)
        }
        log.debug("route \(index + 1)/\(routes.count): \(routes[index]), first hop \(firstHop)", metadata: logMetadata)
        switch firstHop {
        case .address(let address):
            offer(literal: address)
        case .unix(let path):
            do {
                offer(literal: try SocketAddress(unixDomainSocketPath: path))
            } catch {
                finish(.failure(FlowError(error)))
            }
        case .hostPort(let host, let port, let interfaceName):
            if let literal = AddressResolver.literalAddress(host, port: port, interfaceName: interfaceName) {
                guard !filtered([literal]).isEmpty else {
                    finish(.failure(.dns(DNSServiceCode.noSuchRecord)))
                    return
                }
                offer(literal: literal)
                return
            }
            resolvedName = true
            let eventLoop = self.eventLoop
            let lookup = configuration.addressLookup ?? (configuration.useSystemResolver
                ? AddressResolver.systemLookup(version: configuration.ip.version, transport: configuration.transport)
                : DNSResolverLookup.make(allowStale: configuration.allowExpiredDNS) { source in
                    eventLoop.execute { self.noteResolutionSource(source) }
                })
            // The sink keeps the establishment alive until the lookup has reported, as a pending
            // future would.
            lookup(host, port, ResolutionSink { event in
                eventLoop.execute { self.resolved(event) }
            })
        }
    }

    /// The least fresh source of the answers used decides what the report says.
    private func noteResolutionSource(_ source: DNSResolverLookup.Source) {
        log.debug("DNS answer from \(source)", metadata: logMetadata)
        switch (resolutionSource, source) {
        case (_, .expiredCache): resolutionSource = .expiredCache
        case (.query, .cache): resolutionSource = .cache
        default: break
        }
    }

    /// Gives up on the newest attempt and moves on to the next address.
    func skipCurrent() {
        raise { $0.skipCurrent(now: .now()) }
    }

    /// Stops for good: every attempt is closed, and one that completes later is closed too.
    func abandon() {
        guard !abandoned else { return }
        abandoned = true
        directTimer?.cancel()
        directTimer = nil
        directRace?.abandon()
        raise { $0.cancel() }
    }

    // MARK: - Feeding the racer

    /// An address that needs no lookup: the only candidate, nothing to sort.
    private func offer(literal address: SocketAddress) {
        if configuration.ip.version != .v4, NAT64Synthesis.needed(for: address, interfaceIndex: interfaceIndex) {
            // No IPv4 route: an IPv6-only network may reach it through NAT64.
            NAT64Synthesis.synthesize(address, on: eventLoop).whenSuccess { synthesized in
                guard !self.abandoned else { return }
                if synthesized.isEmpty {
                    self.offerDirectly(address)
                } else {
                    self.log.debug("NAT64: \(address.logText) as \(synthesized.map { $0.logText }.joined(separator: ", "))", metadata: self.logMetadata)
                    self.raise { $0.answered(.ipv6, with: synthesized.map { RaceCandidate(address: $0) }, now: .now()) }
                    self.raise { $0.resolutionFinished(now: .now()) }
                }
            }
            return
        }
        offerDirectly(address)
    }

    private func offerDirectly(_ address: SocketAddress) {
        let family = AddressFamily(of: address)
        raise { $0.answered(family, with: [RaceCandidate(address: address)], now: .now()) }
        raise { $0.resolutionFinished(now: .now()) }
    }

    private func resolved(_ event: ResolutionSink.Event) {
        guard !abandoned else { return }
        switch event {
        case .answer(let family, let addresses):
            let usable = filtered(addresses)
            log.debug(
                "resolved \(family): \(usable.count) usable of \(addresses.count) [\(usable.map { $0.logText }.joined(separator: ", "))]",
                metadata: logMetadata)
            resolvedCount += usable.count
            let candidates = SourceAddressProbe.candidates(for: usable, interfaceIndex: interfaceIndex)
            raise { $0.answered(family, with: candidates, now: .now()) }
        case .familyFailed(let family, let error):
            log.debug("resolving \(family) failed: \(error.logDescription)", metadata: logMetadata)
            raise { $0.answerFailed(family, error: error, now: .now()) }
        case .finished:
            resolutionEnded = .now()
            raise { $0.resolutionFinished(now: .now()) }
        case .failed(let error):
            log.debug("resolution failed: \(error.logDescription)", metadata: logMetadata)
            resolutionEnded = .now()
            raise { $0.resolutionFailed(error, now: .now()) }
        }
    }

    /// The addresses the parameters' IP version allows.
    private func filtered(_ addresses: [SocketAddress]) -> [SocketAddress] {
        switch configuration.ip.version {
        case .any: return addresses
        case .v4: return addresses.filter { $0.protocol != .inet6 }
        case .v6: return addresses.filter { $0.protocol != .inet }
        }
    }

    /// Hands one event to the racer and carries out its actions (after those of earlier events).
    private func raise(_ event: @escaping (inout Racer) -> [Racer.Action]) {
        queuedEvents.append(event)
        guard !isPerforming else { return }
        isPerforming = true
        while !queuedEvents.isEmpty {
            let next = queuedEvents.removeFirst()
            for action in next(&racer) { perform(action) }
        }
        isPerforming = false
    }

    private func perform(_ action: Racer.Action) {
        switch action {
        case .startAttempt(let id, let address):
            start(id, address: address)
        case .scheduleTimer(let deadline):
            timer?.cancel()
            timer = eventLoop.scheduleTask(deadline: deadline) { [weak self] in
                self?.raise { $0.timerFired(now: .now()) }
            }
        case .cancelTimer:
            timer?.cancel()
            timer = nil
        case .cancelAttempt(let id):
            guard let attempt = attempts.removeValue(forKey: id) else { return }
            log.debug("attempt \(id) to \(attempt.address.logText) cancelled (lost the race, or establishment stopped)", metadata: logMetadata)
            attempt.cancelled = true
            attempt.channel?.close(promise: nil)
        case .succeed(let id):
            guard let attempt = attempts.removeValue(forKey: id), let channel = attempt.channel else {
                finish(.failure(.posix(ECANCELED)))
                return
            }
            winner = attempt
            log.debug("attempt \(id) to \(attempt.address.logText) won", metadata: logMetadata)
            if resolutionEnded == nil { resolutionEnded = .now() }
            finish(.success(channel))
        case .fail(let error):
            log.debug("route \(routes[routeIndex]) failed: \(error.logDescription)", metadata: logMetadata)
            // The next route (a fallback proxy, or direct when failover is allowed) gets its
            // turn, unless TLS failed: the server was reached and another way would not help.
            if case .tls = error {
                finish(.failure(error))
                return
            }
            var next = routeIndex + 1
            if directRace != nil || directTimer != nil {
                // DIRECT is (or is about to be) racing already: it is not tried a second time.
                while next < routes.count, routes[next] == .direct { next += 1 }
            }
            if next < routes.count {
                startRoute(next)
            } else if directTimer != nil {
                // The proxy failed before DIRECT joined: go direct now.
                directTimer?.cancel()
                startDirectRace()
                ownFailure = error
            } else if directRace != nil {
                ownFailure = error
            } else {
                finish(.failure(error))
            }
        }
    }

    private func start(_ id: Racer.AttemptID, address: SocketAddress) {
        let attempt = Attempt(address: address, started: .now())
        log.debug("attempt \(id) to \(address.logText) via \(routes[routeIndex])", metadata: logMetadata)
        attempts[id] = attempt
        if firstTried == nil { firstTried = address }
        connect(attempt, interfaceIndex: interfaceIndex).whenComplete { result in
            guard !attempt.cancelled else {
                if case .success(let channel) = result { channel.close(promise: nil) }
                return
            }
            switch result {
            case .success(let channel):
                attempt.channel = channel
                if InterfaceSelection.violatesRestrictions(local: channel.localAddress, configuration: self.configuration) {
                    // The route goes over an interface the parameters rule out.
                    self.log.debug("attempt \(id) left through an interface the parameters rule out", metadata: self.logMetadata)
                    channel.close(promise: nil)
                    self.raise { $0.attemptFailed(id, error: .posix(ENETUNREACH), now: .now()) }
                    return
                }
                self.log.trace("attempt \(id) to \(attempt.address.logText) is up", metadata: self.logMetadata)
                self.raise { $0.attemptSucceeded(id, now: .now()) }
            case .failure(let error):
                self.log.debug("attempt \(id) to \(attempt.address.logText) failed: \(Self.describe(error))", metadata: self.logMetadata)
                self.raise { $0.attemptFailed(id, error: FlowError(error), now: .now()) }
            }
        }
    }

    private func finish(_ result: Result<Channel, FlowError>) {
        guard !abandoned else {
            if case .success(let channel) = result { channel.close(promise: nil) }
            return
        }
        abandoned = true
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

    /// What is left of the connection timeout (nil without one), for the proxy handshake.
    private func remainingConnectionTimeout() -> TimeAmount? {
        guard configuration.tcp.connectionTimeout > 0 else { return nil }
        let left = TimeAmount.seconds(Int64(configuration.tcp.connectionTimeout)) - (.now() - started)
        return max(left, .milliseconds(1))
    }

    private func socketOptions(for address: SocketAddress, interfaceIndex: Int?) -> [SocketOptionSetting] {
        let family: SocketFamily = address.protocol == .inet6 ? .inet6 : .inet
        var options: [SocketOptionSetting] = []
        let isUnix = address.protocol == .unix
        switch configuration.transport {
        case .tcp:
            if !isUnix {
                options += SocketOptionPlan.tcp(configuration.tcp)
                // NIO turns Nagle off by default; Apple leaves it on unless `noDelay` is set.
                options.append(.init(level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: configuration.tcp.noDelay ? 1 : 0))
            }
        case .udp:
            options += SocketOptionPlan.udp(configuration.udp)
        }
        if !isUnix {
            options += SocketOptionPlan.ip(configuration.ip, family: family, datagram: configuration.transport == .udp)
            options += SocketOptionPlan.trafficClass(configuration.trafficClass, family: family)
        }
        if configuration.allowLocalEndpointReuse {
            options.append(.init(level: SOL_SOCKET, name: SO_REUSEADDR, value: 1))
            options.append(.init(level: SOL_SOCKET, name: SO_REUSEPORT, value: 1))
        }
        if let interfaceIndex {
            options.append(.init(level: SOL_SOCKET, name: InterfaceSelection.soBindToIfindex, value: Int32(interfaceIndex)))
        }
        return options
    }

    /// Asks the challenge block (if any) for the client identity before the handshake.
    private static func resolveChallenge(_ tls: FlowTLSConfiguration, on eventLoop: EventLoop) -> EventLoopFuture<FlowTLSConfiguration> {
        guard let challenge = tls.challenge else { return eventLoop.makeSucceededFuture(tls) }
        let promise = eventLoop.makePromise(of: FlowTLSConfiguration.self)
        challenge { identity in
            var settings = tls
            if let identity {
                settings.certificateChain = identity.certificates
                settings.privateKey = identity.key
            }
            promise.succeed(settings)
        }
        return promise.futureResult
    }

    private func localAddress(for remote: SocketAddress) throws -> SocketAddress? {
        guard let local = configuration.localTarget else { return nil }
        switch local {
        case .address(let address):
            return address
        case .hostPort(let host, let port, let interfaceName):
            if let address = AddressResolver.literalAddress(host, port: port, interfaceName: interfaceName) {
                return address
            }
            throw FlowError.posix(EINVAL)
        case .unix(let path):
            return try SocketAddress(unixDomainSocketPath: path)
        }
    }

    private func connect(_ attempt: Attempt, interfaceIndex: Int?) -> EventLoopFuture<Channel> {
        let address = attempt.address
        let options = socketOptions(for: address, interfaceIndex: interfaceIndex)
        let local: SocketAddress?
        do {
            local = try localAddress(for: address)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        let flow = self.flow
        switch configuration.transport {
        case .tcp:
            var bootstrap = ClientBootstrap(group: eventLoop)
                .channelOption(ChannelOptions.autoRead, value: false)
                .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
                // Apple has no per-attempt timeout of its own; keep NIO's out of the way and
                // let the kernel (or `connectionTimeout`) decide.
                .connectTimeout(.seconds(130))
            if configuration.multipath && MPTCPSupport.available {
                bootstrap = bootstrap.enableMPTCP(true)
            }
            // Fast Open is best effort: the kernel refuses it when net.ipv4.tcp_fastopen has
            // client support off, and the connection must then go ahead without it. With it, the
            // kernel sends the SYN only with the first write, so it is used only when a first
            // write is certain (a TLS ClientHello, or idempotent data): a server-speaks-first
            // protocol would otherwise never see a SYN.
            // NIO learns no peer address for a deferred connect, and swift-nio-ssl needs one to
            // check a certificate against an IP-literal target: TLS to a literal goes without.
            // (Through a proxy the first bytes belong to the proxy handshake: no Fast Open data.)
            let proxy = currentProxy
            let initialData = proxy == nil ? fastOpen?.data : nil
            let tlsToName = configuration.tls != nil
                && (configuration.tls?.serverName ?? configuration.target.hostName)
                    .map { AddressResolver.literalAddress($0, port: 0) == nil } == true
            let usesFastOpen = configuration.tcp.enableFastOpen && (tlsToName || initialData != nil)
                || (configuration.allowFastOpen && initialData != nil)
            let fastOpenOption = SocketOptionSetting(level: Int32(IPPROTO_TCP), name: TCP_FASTOPEN_CONNECT, value: 1)
            let bestEffort = usesFastOpen ? [fastOpenOption] : []
            bootstrap = bootstrap.applying(options.filter { !($0.level == Int32(IPPROTO_TCP) && $0.name == TCP_FASTOPEN_CONNECT) })
            if let local { bootstrap = bootstrap.bind(to: local) }
            bootstrap = bootstrap.channelInitializer { channel in
                attempt.channel = channel
                guard let flow, !attempt.cancelled else { return channel.eventLoop.makeFailedFuture(FlowError.posix(ECANCELED)) }
                for option in bestEffort {
                    try? channel.syncOptions?.setOption(option.channelOption, value: option.channelValue)
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FlowChannelHandler<ByteBuffer>(flow: flow))
                }
            }
            var connected = bootstrap.connect(to: address)
            if let initialData {
                // Written before anything else; with Fast Open it leaves in the SYN, and the
                // connect NIO reported is only then really under way.
                connected = connected.flatMap { channel in
                    attempt.wroteInitialData = true
                    return channel.writeAndFlush(initialData).flatMap {
                        FastOpenHandshake.established(channel)
                    }.map { channel }.flatMapErrorThrowing { error in
                        channel.close(promise: nil)
                        throw error
                    }
                }
            }
            // (TLS over Fast Open: the ClientHello is the first write, and the TLS handshake
            // proves the connect.)
            connected = connected.map { channel in
                attempt.connected = .now()
                return channel
            }
            if let proxy {
                // The tunnel is part of the attempt: an attempt wins once the whole stack is up.
                let target = configuration.target
                let timeout = remainingConnectionTimeout()
                let version = configuration.ip.version
                let metadata = logMetadata
                connected = connected.flatMap { channel in
                    NetworkLog.proxy.debug("tunnel to \(target) via \(proxy)", metadata: metadata)
                    return ProxyTunnel.establish(on: channel, to: target, via: proxy, timeout: timeout, ipVersion: version)
                        .map {
                            NetworkLog.proxy.debug("tunnel to \(target) via \(proxy) is up", metadata: metadata)
                            return channel
                        }.flatMapErrorThrowing { error in
                            // ProxyError's text never carries the credential.
                            NetworkLog.proxy.debug("tunnel via \(proxy) failed: \(Self.describe(error))", metadata: metadata)
                            throw error
                        }
                }
            }
            // Certificates name the target, not the proxy.
            let peer = proxy == nil ? address : configuration.target.literalAddress
            return secured(connected, attempt: attempt) { channel, settings, hostName in
                DTLSStack.usesGnuTLSForStream(settings)
                    ? DTLSStack.startClient(ByteBuffer.self, on: channel, settings: settings, hostName: hostName)
                    : TLSStack.startClient(on: channel, settings: settings, hostName: hostName, peer: peer)
            }
        case .udp:
            let bootstrap = DatagramBootstrap(group: eventLoop)
                .channelOption(ChannelOptions.autoRead, value: false)
                .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
                .applying(options)
                .channelInitializer { channel in
                attempt.channel = channel
                guard let flow, !attempt.cancelled else { return channel.eventLoop.makeFailedFuture(FlowError.posix(ECANCELED)) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        FlowChannelHandler<AddressedEnvelope<ByteBuffer>>(flow: flow)
                    )
                }
            }
            let bindAddress: SocketAddress
            do {
                bindAddress = try local ?? SocketAddress(ipAddress: address.protocol == .inet6 ? "::" : "0.0.0.0", port: 0)
            } catch {
                return eventLoop.makeFailedFuture(error)
            }
            let connected: EventLoopFuture<Channel> = bootstrap.bind(to: bindAddress).flatMap { channel in
                channel.connect(to: address).map {
                    attempt.connected = .now()
                    return channel
                }.flatMapErrorThrowing { error in
                    channel.close(promise: nil)
                    throw error
                }
            }
            return secured(connected, attempt: attempt) { channel, settings, hostName in
                DTLSStack.startClient(AddressedEnvelope<ByteBuffer>.self, on: channel, settings: settings, hostName: hostName)
            }
        }
    }

    /// The security step of an attempt (TLS over TCP, DTLS over UDP), when the flow has one:
    /// the challenge block is asked for a client identity, `start` runs the handshake on the
    /// connected channel, and its facts go to the attempt. A failed handshake closes the socket.
    private func secured(
        _ connected: EventLoopFuture<Channel>, attempt: Attempt,
        start: @escaping @Sendable (Channel, FlowTLSConfiguration, String?) -> EventLoopFuture<TLSSessionFacts>
    ) -> EventLoopFuture<Channel> {
        guard let tls = configuration.tls else { return connected }
        let hostName = tls.serverName ?? configuration.target.hostName
        var metadata = logMetadata
        metadata["verification"] = "\(tls.verificationLogText(server: false))"
        if let hostName { metadata["server_name"] = "\(hostName)" }
        return connected.flatMap { [metadata] channel in
            let started = NIODeadline.now()
            NetworkLog.tls.debug("handshake with \(attempt.address.logText)", metadata: metadata)
            return Self.resolveChallenge(tls, on: channel.eventLoop).flatMap { settings in
                start(channel, settings, hostName)
            }.map { facts in
                NetworkLog.tls.debug(
                    "handshake complete, peer trusted", metadata: metadata.merging(facts.logMetadata) { a, _ in a })
                attempt.tlsFacts = facts
                attempt.tlsHandshakeDuration = .now() - started
                return channel
            }.flatMapErrorThrowing { error in
                NetworkLog.tls.debug("handshake failed: \(Self.describe(error))", metadata: metadata)
                channel.close(promise: nil)
                throw error
            }
        }
    }

    // MARK: - Logging

    private var log: Logger { NetworkLog.establishment }

    /// The flow's name, carried by every line about its establishment.
    private var logMetadata: Logger.Metadata { LogIDs.connectionMetadata(logID) }

    /// An error from a step of an attempt, for a log line: proxy errors keep their detail.
    private static func describe(_ error: any Error) -> String {
        if let proxy = error as? ProxyError { return "\(proxy) (\(proxy.flowError.logDescription))" }
        return FlowError(error).logDescription
    }
}
