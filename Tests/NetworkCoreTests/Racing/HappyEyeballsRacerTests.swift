#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import Testing

@testable import NetworkCore

/// Every rule of the racer, driven by a fake clock: no sockets, no sleeps.
@Suite("Core.HappyEyeballsRacer")
struct HappyEyeballsRacerTests {
    typealias Action = HappyEyeballsRacer.Action

    /// Time as the tests want it: milliseconds from an arbitrary origin.
    static func at(_ milliseconds: Int64) -> NIODeadline {
        .uptimeNanoseconds(UInt64(1_000_000_000 + milliseconds * 1_000_000))
    }

    static func v6(_ n: Int) -> RaceCandidate {
        RaceCandidate(address: try! SocketAddress(ipAddress: "2001:db8::\(n)", port: 443))
    }

    static func v4(_ n: Int) -> RaceCandidate {
        RaceCandidate(address: try! SocketAddress(ipAddress: "192.0.2.\(n)", port: 443))
    }

    static let refused = FlowError.posix(ECONNREFUSED)
    static let timedOut = FlowError.posix(ETIMEDOUT)
    static let noRoute = FlowError.posix(ENETUNREACH)

    let at = Self.at
    let v6 = Self.v6
    let v4 = Self.v4

    // MARK: Resolution delay

    @Test("an AAAA answer starts an attempt at once")
    func aaaaFirstStartsAtOnce() {
        var racer = HappyEyeballsRacer()
        #expect(racer.answered(.ipv6, with: [v6(1)], now: at(0)) == [.startAttempt(1, v6(1).address)])
        // The A answer that follows waits for the attempt delay.
        #expect(racer.answered(.ipv4, with: [v4(1)], now: at(10)) == [.scheduleTimer(at(250))])
        #expect(racer.timerFired(now: at(250)) == [.startAttempt(2, v4(1).address)])
    }

    @Test("an A answer before AAAA waits 50 ms, then goes ahead with IPv4")
    func aFirstWaitsResolutionDelay() {
        var racer = HappyEyeballsRacer()
        #expect(racer.answered(.ipv4, with: [v4(1)], now: at(0)) == [.scheduleTimer(at(50))])
        // An early (or stale) firing changes nothing: the racer looks at the clock.
        #expect(racer.timerFired(now: at(30)) == [.scheduleTimer(at(50))])
        #expect(racer.timerFired(now: at(50)) == [.startAttempt(1, v4(1).address)])
    }

    @Test("an AAAA answer within the resolution delay goes first")
    func aaaaWithinDelayGoesFirst() {
        var racer = HappyEyeballsRacer()
        #expect(racer.answered(.ipv4, with: [v4(1)], now: at(0)) == [.scheduleTimer(at(50))])
        #expect(racer.answered(.ipv6, with: [v6(1)], now: at(20)) == [.startAttempt(1, v6(1).address), .scheduleTimer(at(270))])
        #expect(racer.timerFired(now: at(270)) == [.startAttempt(2, v4(1).address)])
    }

    @Test("a negative AAAA answer ends the resolution delay at once")
    func emptyAAAAEndsDelay() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv4, with: [v4(1)], now: at(0))
        #expect(racer.answered(.ipv6, with: [], now: at(5)) == [.startAttempt(1, v4(1).address), .cancelTimer])
    }

    @Test("the end of resolution ends the resolution delay at once")
    func resolutionEndEndsDelay() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv4, with: [v4(1)], now: at(0))
        #expect(racer.resolutionFinished(now: at(1)) == [.startAttempt(1, v4(1).address), .cancelTimer])
    }

    // MARK: Late answers

    @Test("an AAAA answer after the delay is interleaved next, not appended")
    func lateAAAAIsInterleaved() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv4, with: [v4(1), v4(2)], now: at(0))
        #expect(racer.timerFired(now: at(50)) == [.startAttempt(1, v4(1).address), .scheduleTimer(at(300))])
        // AAAA arrives while the first IPv4 attempt runs: IPv6 is due next.
        #expect(racer.answered(.ipv6, with: [v6(1)], now: at(120)) == [])
        #expect(racer.timerFired(now: at(300)) == [.startAttempt(2, v6(1).address), .scheduleTimer(at(550))])
        #expect(racer.timerFired(now: at(550)) == [.startAttempt(3, v4(2).address)])
    }

    @Test("a late address arriving after the attempt delay ran out starts at once")
    func lateAddressAfterDelayStartsAtOnce() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1)], now: at(0))
        #expect(racer.answered(.ipv4, with: [v4(1)], now: at(400)) == [.startAttempt(2, v4(1).address)])
    }

    @Test("an address given twice is tried once")
    func duplicatesAreTriedOnce() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1)], now: at(0))
        #expect(racer.answered(.ipv6, with: [v6(1)], now: at(300)) == [])
    }

    @Test("late addresses of one family are placed by their RFC 6724 key")
    func lateAddressesSortedByKey() {
        var interleaver = FamilyInterleaver()
        let weak = RaceCandidate(address: v6(1).address, rank: AddressSorting.key(destination: [0x20, 0x02] + Array(repeating: 0, count: 14), source: nil))
        let strong = RaceCandidate(address: v6(2).address, rank: .neutral)
        interleaver.insert([weak])
        interleaver.insert([strong])
        #expect(interleaver.next() == strong)
        #expect(interleaver.next() == weak)
    }

    // MARK: Stagger and failures

    @Test("attempts start 250 ms apart, families alternating")
    func staggered() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv4, with: [v4(1), v4(2)], now: at(0))
        #expect(racer.answered(.ipv6, with: [v6(1), v6(2)], now: at(0)) == [.startAttempt(1, v6(1).address), .scheduleTimer(at(250))])
        #expect(racer.timerFired(now: at(250)) == [.startAttempt(2, v4(1).address), .scheduleTimer(at(500))])
        #expect(racer.timerFired(now: at(500)) == [.startAttempt(3, v6(2).address), .scheduleTimer(at(750))])
        #expect(racer.timerFired(now: at(750)) == [.startAttempt(4, v4(2).address)])
    }

    @Test("a failed attempt starts the next one at once")
    func failureStartsNext() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1), v6(2)], now: at(0))
        // (Nothing is left to stagger, so the timer goes.)
        #expect(racer.attemptFailed(1, error: Self.refused, now: at(3)) == [.startAttempt(2, v6(2).address), .cancelTimer])
    }

    @Test("a failure starts the next one at once even while an older attempt still runs")
    func failureWithOthersRunning() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1), v6(2), v6(3)], now: at(0))
        _ = racer.timerFired(now: at(250))
        #expect(racer.attemptFailed(2, error: Self.refused, now: at(260)) == [.startAttempt(3, v6(3).address), .cancelTimer])
    }

    @Test("the first attempt to complete wins; the others are cancelled")
    func winnerCancelsOthers() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1), v6(2)], now: at(0))
        _ = racer.answered(.ipv4, with: [v4(1)], now: at(0))
        _ = racer.timerFired(now: at(250))
        #expect(racer.attemptSucceeded(2, now: at(300)) == [.cancelAttempt(1), .cancelTimer, .succeed(2)])
        #expect(racer.isFinished)
        // Stragglers: a late success is closed, a late failure ignored.
        #expect(racer.attemptSucceeded(1, now: at(310)) == [.cancelAttempt(1)])
        #expect(racer.attemptFailed(1, error: Self.refused, now: at(310)) == [])
        #expect(racer.timerFired(now: at(500)) == [])
    }

    @Test("every address failing fails the race with the most relevant error")
    func allFail() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv4, with: [v4(1), v4(2)], now: at(0))
        _ = racer.answered(.ipv6, with: [v6(1)], now: at(0))
        #expect(racer.attemptFailed(1, error: Self.noRoute, now: at(1)) == [.startAttempt(2, v4(1).address), .scheduleTimer(at(251))])
        #expect(racer.attemptFailed(2, error: Self.timedOut, now: at(2)) == [.startAttempt(3, v4(2).address), .cancelTimer])
        // No route (the IPv6 address) says less than the timeout that came after it.
        #expect(racer.attemptFailed(3, error: Self.noRoute, now: at(3)) == [.fail(Self.timedOut)])
    }

    @Test("a refusal outranks a later timeout")
    func refusalOutranksTimeout() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1), v6(2)], now: at(0))
        _ = racer.resolutionFinished(now: at(0))
        _ = racer.attemptFailed(1, error: Self.refused, now: at(1))
        #expect(racer.attemptFailed(2, error: Self.timedOut, now: at(2)) == [.fail(Self.refused)])
    }

    @Test("a TLS failure ends the race at once")
    func tlsFailureEndsRace() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1), v6(2)], now: at(0))
        _ = racer.timerFired(now: at(250))
        let tls = FlowError.tls(-9808)
        #expect(racer.attemptFailed(2, error: tls, now: at(300)) == [.cancelAttempt(1), .fail(tls)])
    }

    @Test("nothing found: the resolution's error, or no such record")
    func nothingFound() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [], now: at(0))
        #expect(racer.answered(.ipv4, with: [], now: at(1)) == [.fail(.dns(DNSServiceCode.noSuchRecord))])

        var failing = HappyEyeballsRacer()
        #expect(failing.resolutionFailed(.dns(DNSServiceCode.timeout), now: at(0)) == [.fail(.dns(DNSServiceCode.timeout))])
    }

    @Test("a failed family query is what the race reports when no address turns up")
    func familyFailureReported() {
        var racer = HappyEyeballsRacer()
        #expect(racer.answerFailed(.ipv6, error: .dns(DNSServiceCode.timeout), now: at(0)) == [])
        #expect(racer.answered(.ipv4, with: [], now: at(1)) == [.fail(.dns(DNSServiceCode.timeout))])
        // With addresses, a failed AAAA query changes nothing.
        var other = HappyEyeballsRacer()
        _ = other.answered(.ipv4, with: [v4(1)], now: at(0))
        #expect(other.answerFailed(.ipv6, error: .dns(DNSServiceCode.timeout), now: at(2)) == [.startAttempt(1, v4(1).address), .cancelTimer])
    }

    @Test("the race waits for answers still to come before failing")
    func waitsForOutstandingAnswers() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1)], now: at(0))
        #expect(racer.attemptFailed(1, error: Self.refused, now: at(1)) == [])
        #expect(racer.answered(.ipv4, with: [v4(1)], now: at(30)) == [.startAttempt(2, v4(1).address)])
    }

    // MARK: Knobs

    @Test("the connection attempt delay is clamped to 100 ms … 2 s")
    func delayClamping() {
        #expect(HappyEyeballsRacer.Settings(connectionAttemptDelay: .milliseconds(10)).connectionAttemptDelay == .milliseconds(100))
        #expect(HappyEyeballsRacer.Settings(connectionAttemptDelay: .seconds(5)).connectionAttemptDelay == .seconds(2))
        #expect(HappyEyeballsRacer.Settings(connectionAttemptDelay: .milliseconds(400)).connectionAttemptDelay == .milliseconds(400))
        var racer = HappyEyeballsRacer(settings: .init(connectionAttemptDelay: .milliseconds(1)))
        #expect(racer.answered(.ipv6, with: [v6(1), v6(2)], now: at(0)) == [.startAttempt(1, v6(1).address), .scheduleTimer(at(100))])
    }

    @Test("First Address Family Count 2 tries two of the leading family first")
    func firstAddressFamilyCount() {
        var racer = HappyEyeballsRacer(settings: .init(firstAddressFamilyCount: 2))
        _ = racer.answered(.ipv4, with: [v4(1), v4(2)], now: at(0))
        _ = racer.answered(.ipv6, with: [v6(1), v6(2), v6(3)], now: at(0))
        var started: [SocketAddress] = []
        for id in 1...5 {
            for case .startAttempt(_, let address) in racer.attemptFailed(id, error: Self.refused, now: at(Int64(id))) {
                started.append(address)
            }
        }
        #expect(started == [v6(2), v4(1), v6(3), v4(2)].map(\.address))
    }

    // MARK: Cancel and skip

    @Test("cancel mid-race cancels every attempt and the timer")
    func cancelMidRace() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1), v6(2), v6(3)], now: at(0))
        _ = racer.timerFired(now: at(250))
        #expect(racer.cancel() == [.cancelAttempt(1), .cancelAttempt(2), .cancelTimer])
        #expect(racer.timerFired(now: at(500)) == [])
        #expect(racer.attemptSucceeded(2, now: at(501)) == [.cancelAttempt(2)])
        #expect(racer.cancel() == [])
    }

    @Test("skipping cancels the newest attempt and starts the next at once")
    func skipCurrent() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv6, with: [v6(1), v6(2), v6(3)], now: at(0))
        _ = racer.timerFired(now: at(250))
        #expect(racer.skipCurrent(now: at(260)) == [.cancelAttempt(2), .startAttempt(3, v6(3).address), .cancelTimer])
        // Nothing left to start: the older attempt keeps going.
        #expect(racer.skipCurrent(now: at(270)) == [.cancelAttempt(3)])
        #expect(racer.attemptSucceeded(1, now: at(280)) == [.succeed(1)])
    }

    @Test("skipping the only attempt fails as if nothing answered")
    func skipOnly() {
        var racer = HappyEyeballsRacer()
        _ = racer.answered(.ipv4, with: [v4(1)], now: at(0))
        _ = racer.resolutionFinished(now: at(0))
        #expect(racer.skipCurrent(now: at(5)) == [.cancelAttempt(1), .fail(Self.refused)])
    }
}
