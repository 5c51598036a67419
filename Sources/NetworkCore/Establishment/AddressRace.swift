#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOCore
import NetworkDNS

/// One route's race: the addresses of its first hop (the target, or the proxy) are looked up
/// and raced (Happy Eyeballs). The rules live in `HappyEyeballsRacer`, a value type; this class
/// is its edge: it feeds it answers, timer firings and attempt outcomes, and carries out what it
/// asks for (open an attempt through `ClientStackBuilder`, arm the timer, close a loser). It
/// also keeps the facts the establishment report shows. Lives on the flow's event loop.
final class AddressRace: @unchecked Sendable {
    /// How a race ended.
    enum Outcome {
        /// This attempt's stack is up.
        case won(ConnectionAttempt, Channel)
        /// Every address failed: the next route may be tried.
        case failed(FlowError)
        /// The establishment cannot go on (an address the parameters rule out, a bad path).
        case stopped(FlowError)
    }

    private typealias Racer = HappyEyeballsRacer

    private let configuration: FlowConfiguration
    private let eventLoop: EventLoop
    private let stack: ClientStackBuilder
    private let route: ProxyRoute
    private let interfaceIndex: Int?
    private let logMetadata: Logger.Metadata
    private let ended: (Outcome) -> Void

    private var racer: Racer
    private var attempts: [Racer.AttemptID: ConnectionAttempt] = [:]
    private var timer: Scheduled<Void>?
    /// The name lookup while it runs.
    private var lookup: RunningAddressLookup?
    /// Set once the outcome was reported or the race was cancelled: answers are ignored then.
    private var isOver = false
    /// Racer events raised while the actions of an earlier one are being carried out (a connect
    /// can fail synchronously) wait here, so the racer sees events one at a time, in order.
    private var queuedEvents: [(inout Racer) -> [Racer.Action]] = []
    private var isPerforming = false

    // What the establishment report needs.
    private let resolutionStarted: NIODeadline = .now()
    private var resolvedName = false
    private var resolvedCount = 0
    private var resolutionEnded: NIODeadline?
    private var firstTried: SocketAddress?
    /// The attempt that won.
    private(set) var winner: ConnectionAttempt?
    /// Where the answers came from: the least fresh source seen so far (a new route's race
    /// starts from the previous one's).
    var resolutionSource: ResolutionSource = .query

    /// A race for `route`, whose attempts `stack` builds; `ended` hears the outcome once.
    init(
        route: ProxyRoute, configuration: FlowConfiguration, stack: ClientStackBuilder, interfaceIndex: Int?,
        logMetadata: Logger.Metadata, ended: @escaping (Outcome) -> Void
    ) {
        self.route = route
        self.configuration = configuration
        self.eventLoop = stack.eventLoop
        self.stack = stack
        self.interfaceIndex = interfaceIndex
        self.logMetadata = logMetadata
        self.ended = ended
        self.racer = Racer(settings: .init(connectionAttemptDelay: configuration.connectionAttemptDelay))
    }

    /// The resolution step, for names only (an address literal involves none, and reports none).
    var resolutionReport: ResolutionReport? {
        guard resolvedName else { return nil }
        return ResolutionReport(
            duration: (resolutionEnded ?? .now()) - resolutionStarted, endpointCount: resolvedCount,
            successful: winner?.address, preferred: firstTried, fromLiteral: false, source: resolutionSource)
    }

    /// Starts racing the addresses of `firstHop`, looking its name up if it has one.
    func start(_ firstHop: FlowTarget) {
        switch firstHop {
        case .address(let address):
            offer(literal: address)
        case .unix(let path):
            do {
                offer(literal: try SocketAddress(unixDomainSocketPath: path))
            } catch {
                end(.stopped(FlowError(error)))
            }
        case .hostPort(let host, let port, let interfaceName):
            if let literal = SocketAddress(literal: host, port: port, interfaceName: interfaceName) {
                guard !filtered([literal]).isEmpty else {
                    end(.stopped(.dns(DNSServiceCode.noSuchRecord)))
                    return
                }
                offer(literal: literal)
                return
            }
            resolvedName = true
            let eventLoop = self.eventLoop
            let lookup = configuration.addressLookup ?? DNSResolverAddressLookup(allowStale: configuration.allowExpiredDNS)
            // The sink keeps the race alive until the lookup has reported, as a pending future
            // would.
            self.lookup = lookup.start(host, port: port, sink: AddressLookupSink { event in
                eventLoop.execute { self.resolved(event) }
            })
        }
    }

    /// Gives up on the newest attempt and moves on to the next address.
    func skipCurrent() {
        raise { $0.skipCurrent(now: .now()) }
    }

    /// Stops for good: the lookup's queries are cancelled and every attempt is closed (one that
    /// completes later is closed too). No outcome is reported.
    func cancel() {
        isOver = true
        stopLookup()
        raise { $0.cancel() }
    }

    // MARK: - Feeding the racer

    /// An address that needs no lookup: the only candidate, nothing to sort.
    private func offer(literal address: SocketAddress) {
        if configuration.ip.version != .v4, NAT64Synthesis.needed(for: address, interfaceIndex: interfaceIndex) {
            // No IPv4 route: an IPv6-only network may reach it through NAT64.
            NAT64Synthesis.synthesize(address, on: eventLoop).whenSuccess { synthesized in
                guard !self.isOver else { return }
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

    private func resolved(_ event: AddressLookupSink.Event) {
        guard !isOver else { return }
        switch event {
        case .answer(let family, let addresses, let source):
            noteSource(source)
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
            lookup = nil
            resolutionEnded = .now()
            raise { $0.resolutionFinished(now: .now()) }
        case .failed(let error):
            lookup = nil
            log.debug("resolution failed: \(error.logDescription)", metadata: logMetadata)
            resolutionEnded = .now()
            raise { $0.resolutionFailed(error, now: .now()) }
        }
    }

    /// The least fresh source of the answers used decides what the report says.
    private func noteSource(_ source: ResolutionSource) {
        log.debug("DNS answer from \(source)", metadata: logMetadata)
        switch (resolutionSource, source) {
        case (_, .expiredCache): resolutionSource = .expiredCache
        case (.query, .cache): resolutionSource = .cache
        default: break
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
            attempt.pendingConnect?.cancel()
            attempt.channel?.close(promise: nil)
        case .succeed(let id):
            guard let attempt = attempts.removeValue(forKey: id), let channel = attempt.channel else {
                end(.stopped(.posix(ECANCELED)))
                return
            }
            winner = attempt
            log.debug("attempt \(id) to \(attempt.address.logText) won", metadata: logMetadata)
            if resolutionEnded == nil { resolutionEnded = .now() }
            end(.won(attempt, channel))
        case .fail(let error):
            log.debug("route \(route) failed: \(error.logDescription)", metadata: logMetadata)
            end(.failed(error))
        }
    }

    private func start(_ id: Racer.AttemptID, address: SocketAddress) {
        let attempt = ConnectionAttempt(address: address, started: .now())
        log.debug("attempt \(id) to \(address.logText) via \(route)", metadata: logMetadata)
        attempts[id] = attempt
        if firstTried == nil { firstTried = address }
        stack.connect(attempt).whenComplete { result in
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
                self.log.debug("attempt \(id) to \(attempt.address.logText) failed: \(ClientStackBuilder.logText(for: error))", metadata: self.logMetadata)
                self.raise { $0.attemptFailed(id, error: FlowError(error), now: .now()) }
            }
        }
    }

    /// Reports the outcome. A race that did not win has no use for answers still to come, so
    /// its queries stop; a winner's keep going, so their answers still reach the cache.
    private func end(_ outcome: Outcome) {
        isOver = true
        if case .won = outcome {} else { stopLookup() }
        ended(outcome)
    }

    private func stopLookup() {
        lookup?.cancel()
        lookup = nil
    }

    private var log: Logger { NetworkLog.establishment }
}
