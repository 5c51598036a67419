#if canImport(Glibc)
import Glibc
#endif
import NetworkCore
import Testing

/// Every row of the transition table in FlowStateMachine.swift (and docs/state-machine.md).
@Suite("Core.FlowStateMachine")
struct FlowStateMachineTests {
    typealias Action = FlowStateMachine.Action

    private func machine(in state: FlowConnectionState) -> FlowStateMachine {
        let m = FlowStateMachine.reaching(state)
        #expect(m.state == state)
        return m
    }

    static let refused = FlowError.posix(ECONNREFUSED)
    static let reset = FlowError.posix(ECONNRESET)

    @Test func setupStartGoesPreparingAndEstablishes() {
        var m = machine(in: .setup)
        #expect(m.start() == [.report(.preparing), .establish])
        #expect(m.state == .preparing)
        #expect(m.start() == [], "a second start is ignored")
    }

    @Test func preparingSuccessGoesReady() {
        var m = machine(in: .preparing)
        #expect(m.establishmentSucceeded() == [.report(.ready), .startTransport])
        #expect(m.state == .ready)
    }

    @Test(arguments: [
        FlowError.posix(ECONNREFUSED), .posix(ENETUNREACH), .posix(EHOSTUNREACH), .posix(ENETDOWN),
        .posix(ETIMEDOUT), .dns(-65554), .dns(-65568), .posix(ENOENT), .posix(ECONNRESET), .posix(ECONNABORTED),
        .posix(EPIPE), .posix(ENOBUFS), .posix(EAGAIN), .posix(EPERM), .posix(EADDRINUSE), .posix(EADDRNOTAVAIL),
        .posix(EHOSTDOWN), .posix(ENETRESET), .posix(EIO),
    ])
    func retryableFailureGoesWaiting(error: FlowError) {
        var m = machine(in: .preparing)
        #expect(m.establishmentFailed(error) == [.report(.waiting(error))])
        #expect(m.state == .waiting(error))
    }

    @Test(arguments: [
        FlowError.posix(EACCES), .posix(EINVAL), .posix(EPROTONOSUPPORT), .tls(-9808), .posix(EAFNOSUPPORT),
        .posix(EPROTO), .posix(EMSGSIZE), .posix(ECANCELED), .posix(ENAMETOOLONG),
    ])
    func fatalFailureGoesFailed(error: FlowError) {
        var m = machine(in: .preparing)
        #expect(m.establishmentFailed(error) == [.report(.failed(error)), .failPending(error)])
        #expect(m.state == .failed(error))
    }

    @Test func explicitTimeoutIsFatalEvenThoughRetryable() {
        var m = machine(in: .preparing)
        let e = FlowError.posix(ETIMEDOUT)
        #expect(m.establishmentFailed(e, fatal: true) == [.report(.failed(e)), .failPending(e)])
    }

    @Test func waitingRestartGoesPreparing() {
        var m = machine(in: .waiting(Self.refused))
        #expect(m.restart() == [.report(.preparing), .establish])
        #expect(m.state == .preparing)
    }

    @Test func waitingPathChangeRetriesOnlyWhenSatisfied() {
        var m = machine(in: .waiting(Self.refused))
        #expect(m.pathChanged(satisfied: false) == [])
        #expect(m.state == .waiting(Self.refused))
        #expect(m.pathChanged(satisfied: true) == [.report(.preparing), .establish])
    }

    @Test(arguments: [FlowConnectionState.setup, .preparing, .ready, .failed(.posix(EINVAL)), .cancelled])
    func restartOutsideWaitingIsIgnored(state: FlowConnectionState) {
        var m = machine(in: state)
        #expect(m.restart() == [])
        #expect(m.state == state)
    }

    @Test func cancelCurrentEndpointSkipsOnlyWhilePreparing() {
        var preparing = machine(in: .preparing)
        #expect(preparing.cancelCurrentEndpoint() == [.skipCandidate])
        #expect(preparing.state == .preparing)
        var ready = machine(in: .ready)
        #expect(ready.cancelCurrentEndpoint() == [])
    }

    @Test func readyTransportFailureGoesFailed() {
        var m = machine(in: .ready)
        #expect(m.transportFailed(Self.reset) == [.report(.failed(Self.reset)), .failPending(Self.reset), .closeTransport(abortive: true)])
        #expect(m.state == .failed(Self.reset))
        #expect(m.transportFailed(Self.reset) == [], "a second failure is not reported")
    }

    @Test(arguments: [FlowConnectionState.setup, .preparing, .waiting(.posix(ECONNREFUSED)), .ready, .failed(.posix(EINVAL))])
    func cancelFromEveryStateEndsWithCancelledLast(state: FlowConnectionState) {
        for force in [false, true] {
            var m = machine(in: state)
            let actions = m.cancel(force: force)
            #expect(actions == [.stopEstablishment, .closeTransport(abortive: force), .failPending(.posix(ECANCELED)), .report(.cancelled)])
            #expect(actions.last == .report(.cancelled))
            #expect(m.state == .cancelled)
        }
    }

    @Test func cancelledIgnoresEverything() {
        var m = machine(in: .cancelled)
        #expect(m.start() == [])
        #expect(m.establishmentSucceeded() == [])
        #expect(m.establishmentFailed(Self.refused) == [])
        #expect(m.restart() == [])
        #expect(m.pathChanged(satisfied: true) == [])
        #expect(m.cancelCurrentEndpoint() == [])
        #expect(m.transportFailed(Self.reset) == [])
        #expect(m.cancel(force: true) == [])
        #expect(m.state == .cancelled)
    }

    @Test func eventsOutOfPlaceAreIgnored() {
        var setup = machine(in: .setup)
        #expect(setup.establishmentSucceeded() == [])
        #expect(setup.establishmentFailed(Self.refused) == [])
        #expect(setup.transportFailed(Self.reset) == [])
        var ready = machine(in: .ready)
        #expect(ready.establishmentFailed(Self.refused) == [])
        #expect(ready.start() == [])
        var failed = machine(in: .failed(.posix(EINVAL)))
        #expect(failed.establishmentSucceeded() == [])
    }
}

/// Per state, what becomes of a send or a receive issued then.
@Suite("Core.FlowStateMachine.decisions")
struct FlowStateMachineDecisionTests {
    @Test func sendsWaitUntilReadyGoOutWhileReadyAndFailAfter() {
        var machine = FlowStateMachine()
        #expect(machine.sendDecision == .hold)
        #expect(machine.receiveRejection == nil)
        _ = machine.start()
        #expect(machine.sendDecision == .hold)
        _ = machine.establishmentFailed(.posix(ECONNREFUSED))
        #expect(machine.state == .waiting(.posix(ECONNREFUSED)))
        #expect(machine.sendDecision == .hold)
        #expect(machine.receiveRejection == nil)
        _ = machine.restart()
        _ = machine.establishmentSucceeded()
        #expect(machine.sendDecision == .write)
        #expect(machine.receiveRejection == nil)
        _ = machine.transportFailed(.posix(ECONNRESET))
        #expect(machine.sendDecision == .fail(.posix(ECONNRESET)))
        #expect(machine.receiveRejection == .posix(ECONNRESET))
        _ = machine.cancel(force: false)
        #expect(machine.sendDecision == .fail(.posix(ECANCELED)))
        #expect(machine.receiveRejection == .posix(ECANCELED))
    }
}

/// A ready stream ends when both directions have: our output shut and the peer's end delivered,
/// in either order.
@Suite("Core.FlowStateMachine.bothDirectionsClosed")
struct FlowStateMachineBothClosedTests {
    typealias Ready = FlowStateMachine.Ready
    static let closed = FlowError.posix(ENOTCONN)
    static let closingActions: [FlowStateMachine.Action] = [
        .report(.failed(closed)), .failPending(closed), .closeTransport(abortive: false),
    ]

    private func ready() -> FlowStateMachine {
        var machine = FlowStateMachine()
        _ = machine.start()
        _ = machine.establishmentSucceeded()
        return machine
    }

    @Test func outputShutThenEndOfStreamFailsWithENOTCONNAndClosesGracefully() {
        var machine = ready()
        #expect(machine.outputShut() == [])
        #expect(machine.current == .ready(Ready(outputShut: true)))
        #expect(machine.endOfStreamDelivered() == Self.closingActions)
        #expect(machine.state == .failed(Self.closed))
        // Only from ready.
        #expect(machine.outputShut() == [])
        #expect(machine.endOfStreamDelivered() == [])
    }

    @Test func endOfStreamThenOutputShutClosesToo() {
        var machine = ready()
        #expect(machine.endOfStreamDelivered() == [])
        #expect(machine.endOfStreamDelivered() == [], "delivered again: still one direction")
        #expect(machine.current == .ready(Ready(endOfStreamDelivered: true)))
        #expect(machine.outputShut() == Self.closingActions)
        #expect(machine.current == .failed(Self.closed))
    }

    @Test(arguments: [FlowConnectionState.setup, .preparing, .waiting(.posix(ECONNREFUSED)), .failed(.posix(EIO)), .cancelled])
    func outsideReadyTheDirectionsAreNotTracked(state: FlowConnectionState) {
        var machine = FlowStateMachine.reaching(state)
        #expect(machine.endOfStreamDelivered() == [])
        #expect(machine.outputShut() == [])
        #expect(machine.state == state)
    }

    @Test func readyStartsWithBothDirectionsOpen() {
        #expect(ready().current == .ready(Ready()))
    }
}

/// A ready flow's outstanding read.
@Suite("Core.FlowStateMachine.reads")
struct FlowStateMachineReadTests {
    typealias Ready = FlowStateMachine.Ready

    @Test func aReadyFlowReadsOneAtATime() {
        var machine = FlowStateMachine.reaching(.ready)
        #expect(machine.mayRequestRead)
        #expect(!machine.readInFlight)
        machine.readRequested()
        #expect(machine.readInFlight)
        #expect(!machine.mayRequestRead, "one read outstanding at a time")
        #expect(machine.current == .ready(Ready(readInFlight: true)))
        machine.readCompleted()
        #expect(!machine.readInFlight)
        #expect(machine.mayRequestRead)
        machine.readCompleted()
        #expect(machine.current == .ready(Ready()), "a completion without a read changes nothing")
    }

    @Test(arguments: [FlowConnectionState.setup, .preparing, .waiting(.posix(ECONNREFUSED)), .failed(.posix(EIO)), .cancelled])
    func noReadOutsideReady(state: FlowConnectionState) {
        var machine = FlowStateMachine.reaching(state)
        #expect(!machine.mayRequestRead)
        machine.readRequested()
        #expect(!machine.readInFlight)
        machine.readCompleted()
        #expect(machine.state == state)
    }

    @Test func leavingReadyDropsItsData() {
        var failed = FlowStateMachine.reaching(.ready)
        failed.readRequested()
        _ = failed.outputShut()
        _ = failed.transportFailed(.posix(ECONNRESET))
        #expect(failed.current == .failed(.posix(ECONNRESET)))
        #expect(!failed.readInFlight)
        var cancelled = FlowStateMachine.reaching(.ready)
        cancelled.readRequested()
        _ = cancelled.cancel(force: false)
        #expect(cancelled.current == .cancelled)
        #expect(!cancelled.readInFlight)
    }
}

/// `state`, what the flow reports, is the state without its data.
@Suite("Core.FlowStateMachine.projection")
struct FlowStateMachineProjectionTests {
    @Test func theReportedStateLeavesTheDataOut() {
        var machine = FlowStateMachine()
        #expect(machine.current == .setup && machine.state == .setup && !machine.isReady)
        _ = machine.start()
        #expect(machine.current == .preparing && machine.state == .preparing && !machine.isReady)
        _ = machine.establishmentFailed(.posix(ECONNREFUSED))
        #expect(machine.current == .waiting(.posix(ECONNREFUSED)) && machine.state == .waiting(.posix(ECONNREFUSED)))
        _ = machine.restart()
        _ = machine.establishmentSucceeded()
        machine.readRequested()
        #expect(machine.current == .ready(FlowStateMachine.Ready(readInFlight: true)))
        #expect(machine.state == .ready && machine.isReady)
        _ = machine.transportFailed(.posix(EIO))
        #expect(machine.state == .failed(.posix(EIO)) && !machine.isReady)
        _ = machine.cancel(force: false)
        #expect(machine.state == .cancelled)
    }
}

extension FlowStateMachine {
    /// A machine brought to `state` by the events that lead there.
    static func reaching(_ state: FlowConnectionState) -> FlowStateMachine {
        var machine = FlowStateMachine()
        switch state {
        case .setup:
            break
        case .preparing:
            _ = machine.start()
        case .ready:
            _ = machine.start()
            _ = machine.establishmentSucceeded()
        case .waiting(let error):
            _ = machine.start()
            _ = machine.establishmentFailed(error)
        case .failed(let error):
            _ = machine.start()
            _ = machine.establishmentFailed(error, fatal: true)
        case .cancelled:
            _ = machine.cancel(force: false)
        }
        return machine
    }
}
