#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore

/// Happy Eyeballs (RFC 8305, with draft-ietf-happy-happyeyeballs-v3's handling of late answers)
/// as a value type: one `mutating` method per event, each returning what the caller must do.
/// It does no I/O and reads no clock: every event carries `now`, so tests drive it with a fake
/// clock and the establishment drives it with `NIODeadline.now()`.
///
/// Rules:
/// - An AAAA answer lets attempts start at once. A positive A answer that comes while AAAA is
///   still outstanding waits up to the resolution delay (50 ms) for it, so IPv6 gets its
///   chance (RFC 8305 §3); an AAAA answer (even an empty one) or the end of resolution ends the
///   wait early.
/// - Addresses are tried in RFC 6724 order, the families interleaved (`FamilyInterleaver`).
/// - A new attempt starts one connection attempt delay (default 250 ms, clamped to 100 ms … 2 s)
///   after the previous one, while the earlier ones keep going.
/// - An attempt that fails lets the next one start at once.
/// - The first attempt to complete (the caller reports it only once the whole stack is up,
///   TLS included) wins; every other attempt is cancelled.
/// - A TLS failure ends the race: a server answered and refused the handshake, and every
///   address names the same service, so the others would fail the same way (and call the
///   user's verify block again).
/// - When every address failed and no more can come, the race fails with the most relevant
///   error seen (`FlowError.relevance`), or with the resolution's error if nothing was tried.
package struct HappyEyeballsRacer: Sendable {
    /// Names one connection attempt; numbered from 1 in start order.
    package typealias AttemptID = Int

    /// The race's knobs.
    package struct Settings: Sendable, Equatable {
        /// RFC 8305's bounds on the connection attempt delay.
        package static let minimumAttemptDelay = TimeAmount.milliseconds(100)
        package static let maximumAttemptDelay = TimeAmount.seconds(2)

        /// Time between the starts of two attempts, within the bounds above.
        package var connectionAttemptDelay: TimeAmount
        /// How long a positive A answer waits for the AAAA answer.
        package var resolutionDelay: TimeAmount
        /// Addresses of the preferred family tried before the first of the other one.
        package var firstAddressFamilyCount: Int

        package init(
            connectionAttemptDelay: TimeAmount = .milliseconds(250),
            resolutionDelay: TimeAmount = .milliseconds(50),
            firstAddressFamilyCount: Int = 1
        ) {
            self.connectionAttemptDelay = min(max(connectionAttemptDelay, Self.minimumAttemptDelay), Self.maximumAttemptDelay)
            self.resolutionDelay = resolutionDelay
            self.firstAddressFamilyCount = max(1, firstAddressFamilyCount)
        }
    }

    /// What the caller must do after an event, in order.
    package enum Action: Equatable, Sendable {
        /// Open a connection attempt to this address (the whole stack).
        case startAttempt(AttemptID, SocketAddress)
        /// Call `timerFired` at this time; replaces any timer asked for before.
        case scheduleTimer(NIODeadline)
        /// The timer asked for before is no longer needed.
        case cancelTimer
        /// Abandon this attempt and close its socket.
        case cancelAttempt(AttemptID)
        /// The race is won by this attempt: hand its connection over.
        case succeed(AttemptID)
        /// The race is lost: establishment fails with this error.
        case fail(FlowError)
    }

    package let settings: Settings
    /// Addresses not tried yet, in the order they will be.
    private var pending: FamilyInterleaver
    /// Every address ever queued, so an address given twice is tried once.
    private var known: Set<SocketAddress> = []
    private var answered: Set<AddressFamily> = []
    private var resolutionComplete = false
    private var resolutionError: FlowError?
    /// Set when a positive A answer started the wait for AAAA.
    private var resolutionDelayEnd: NIODeadline?
    /// Attempts under way, oldest first.
    private var running: [AttemptID] = []
    private var startedAny = false
    /// The next attempt may not start before this while others are running.
    private var nextStartAllowed: NIODeadline?
    private var timer: NIODeadline?
    private var attemptError: FlowError?
    private var nextID: AttemptID = 1
    /// Won, lost or cancelled: every later event is answered with no action (or, for an
    /// attempt that completes anyway, with its cancellation).
    package private(set) var isFinished = false

    package init(settings: Settings = Settings()) {
        self.settings = settings
        self.pending = FamilyInterleaver(firstFamilyCount: settings.firstAddressFamilyCount)
    }

    // MARK: - Resolution events

    /// An answer for one family: its addresses (empty for a negative answer), with their RFC
    /// 6724 keys. More answers for the same family may follow (several servers, push updates).
    package mutating func answered(_ family: AddressFamily, with candidates: [RaceCandidate], now: NIODeadline) -> [Action] {
        guard !isFinished else { return [] }
        let firstAnswer = !answered.contains(family)
        answered.insert(family)
        let fresh = candidates.filter { known.insert($0.address).inserted }
        pending.insert(fresh)
        if family == .ipv4, firstAnswer, !fresh.isEmpty, !answered.contains(.ipv6), !startedAny, !resolutionComplete {
            resolutionDelayEnd = now + settings.resolutionDelay
        }
        if answered.count == AddressFamily.allCases.count {
            resolutionComplete = true
        }
        return advance(now: now)
    }

    /// The query for one family failed; it counts as a negative answer, and its error is what
    /// the race reports if no address is found at all.
    package mutating func answerFailed(_ family: AddressFamily, error: FlowError, now: NIODeadline) -> [Action] {
        guard !isFinished else { return [] }
        resolutionError = error
        return answered(family, with: [], now: now)
    }

    /// No more answers will come.
    package mutating func resolutionFinished(now: NIODeadline) -> [Action] {
        guard !isFinished else { return [] }
        resolutionComplete = true
        return advance(now: now)
    }

    /// Resolution as a whole failed; addresses already given are still tried.
    package mutating func resolutionFailed(_ error: FlowError, now: NIODeadline) -> [Action] {
        guard !isFinished else { return [] }
        resolutionError = error
        resolutionComplete = true
        return advance(now: now)
    }

    // MARK: - Timer and attempt events

    /// The timer asked for fired (early or stale firings are harmless: the racer looks at `now`).
    package mutating func timerFired(now: NIODeadline) -> [Action] {
        guard !isFinished else { return [] }
        timer = nil
        return advance(now: now)
    }

    /// An attempt completed its whole stack.
    package mutating func attemptSucceeded(_ id: AttemptID, now: NIODeadline) -> [Action] {
        guard !isFinished, running.contains(id) else {
            // Too late (another won, or it was cancelled): its connection must be closed.
            return [.cancelAttempt(id)]
        }
        running.removeAll { $0 == id }
        return finish(with: .succeed(id))
    }

    /// An attempt failed (refused, unreachable, timed out, handshake failed).
    package mutating func attemptFailed(_ id: AttemptID, error: FlowError, now: NIODeadline) -> [Action] {
        guard !isFinished, running.contains(id) else { return [] }
        running.removeAll { $0 == id }
        attemptError = FlowError.moreRelevant(attemptError, error)
        if case .tls = error {
            return finish(with: .fail(error))
        }
        nextStartAllowed = now
        return advance(now: now)
    }

    /// Gives up on the newest attempt (`cancelCurrentEndpoint`) and moves on to the next address
    /// at once. Without a running attempt there is nothing to skip.
    package mutating func skipCurrent(now: NIODeadline) -> [Action] {
        guard !isFinished, let newest = running.last else { return [] }
        running.removeLast()
        attemptError = FlowError.moreRelevant(attemptError, .posix(ECANCELED))
        nextStartAllowed = now
        return [.cancelAttempt(newest)] + advance(now: now)
    }

    /// Stops the race (the flow was cancelled or timed out): every attempt is cancelled.
    package mutating func cancel() -> [Action] {
        guard !isFinished else { return [] }
        isFinished = true
        var actions = running.map(Action.cancelAttempt)
        running.removeAll()
        if timer != nil {
            timer = nil
            actions.append(.cancelTimer)
        }
        return actions
    }

    // MARK: - Deciding

    /// Starts what may start now, fails when nothing is left, and keeps the timer on the next
    /// moment something may change by itself.
    private mutating func advance(now: NIODeadline) -> [Action] {
        var actions: [Action] = []
        if mayStart(now: now), let candidate = pending.next() {
            let id = nextID
            nextID += 1
            running.append(id)
            startedAny = true
            nextStartAllowed = now + settings.connectionAttemptDelay
            actions.append(.startAttempt(id, candidate.address))
        }
        if running.isEmpty && pending.isEmpty && resolutionComplete {
            return actions + finish(with: .fail(failureError))
        }
        let wake = wakeUp(now: now)
        if wake != timer {
            timer = wake
            actions.append(wake.map(Action.scheduleTimer) ?? .cancelTimer)
        }
        return actions
    }

    private func mayStart(now: NIODeadline) -> Bool {
        guard !pending.isEmpty else { return false }
        if waitingForAAAA(now: now) { return false }
        if !running.isEmpty, let allowed = nextStartAllowed, now < allowed { return false }
        return true
    }

    private func waitingForAAAA(now: NIODeadline) -> Bool {
        guard !startedAny, !resolutionComplete, !answered.contains(.ipv6), let end = resolutionDelayEnd else {
            return false
        }
        return now < end
    }

    /// When the racer must look again without any other event: the end of the resolution
    /// delay, or the moment the next attempt is due.
    private func wakeUp(now: NIODeadline) -> NIODeadline? {
        guard !pending.isEmpty else { return nil }
        if waitingForAAAA(now: now) { return resolutionDelayEnd }
        if !running.isEmpty, let allowed = nextStartAllowed, now < allowed { return allowed }
        return nil
    }

    private var failureError: FlowError {
        if let attemptError, startedAny {
            // Every attempt was skipped by the user: nothing answered, as far as we know.
            return attemptError == .posix(ECANCELED) ? .posix(ECONNREFUSED) : attemptError
        }
        return resolutionError ?? .dns(DNSServiceCode.noSuchRecord)
    }

    private mutating func finish(with outcome: Action) -> [Action] {
        isFinished = true
        var actions = running.map(Action.cancelAttempt)
        running.removeAll()
        if timer != nil {
            timer = nil
            actions.append(.cancelTimer)
        }
        return actions + [outcome]
    }
}
