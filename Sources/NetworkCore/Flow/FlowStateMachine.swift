#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The connection life cycle as a value type: one `mutating` method per event, each returning the
/// actions the flow must perform. No I/O happens here, so every transition is unit-testable.
/// Each state carries the data only it has (`State`); what the flow reports is its projection,
/// `FlowConnectionState`.
///
/// Transition table (anything not listed is ignored and returns no action):
///
/// | from | event | to | actions |
/// |---|---|---|---|
/// | setup | start | preparing | report, establish |
/// | preparing | establishment succeeded | ready | report, startTransport |
/// | preparing | establishment failed (retryable) | waiting(e) | report |
/// | preparing | establishment failed (fatal) | failed(e) | report, failPending(e) |
/// | preparing | cancelCurrentEndpoint | preparing | skipCandidate |
/// | waiting | restart / path changed to satisfied | preparing | report, establish |
/// | ready | read requested (none in flight) | ready, read in flight | none: the flow reads |
/// | ready | read completed | ready, no read in flight | none |
/// | ready | output shut, peer's end not delivered yet | ready, output shut | none |
/// | ready | peer's end delivered, output not shut yet | ready, end delivered | none |
/// | ready | the second of those two (both directions closed) | failed(ENOTCONN) | report, failPending, closeTransport |
/// | ready | transport failed | failed(e) | report, failPending(e), closeTransport(abortive) |
/// | setup, preparing, waiting, ready, failed | cancel | cancelled | stopEstablishment, closeTransport, failPending(ECANCELED), report |
/// | setup, preparing, waiting, ready, failed | forceCancel | cancelled | as cancel, but the close is abortive |
/// | cancelled | anything | cancelled | none |
package struct FlowStateMachine: Sendable {
    /// A state with the data that belongs to it alone (it goes when the state is left).
    package enum State: Equatable, Sendable {
        case setup
        case preparing
        case waiting(FlowError)
        case ready(Ready)
        case failed(FlowError)
        case cancelled
    }

    /// What a ready flow tracks: its outstanding read and the ends of a stream's two directions.
    package struct Ready: Equatable, Sendable {
        /// A read was asked of the socket and has not completed yet.
        package var readInFlight = false
        /// Our sending side is shut: the final send's FIN went out.
        package var outputShut = false
        /// The peer's end of stream was handed to the application.
        package var endOfStreamDelivered = false

        package init(readInFlight: Bool = false, outputShut: Bool = false, endOfStreamDelivered: Bool = false) {
            self.readInFlight = readInFlight
            self.outputShut = outputShut
            self.endOfStreamDelivered = endOfStreamDelivered
        }
    }

    /// What the flow must do after an event.
    package enum Action: Equatable, Sendable {
        /// Publish this state to the user.
        case report(FlowConnectionState)
        /// Begin (or begin again) establishing: path, resolution, connecting.
        case establish
        /// Abandon the attempt in progress and move on to the next candidate.
        case skipCandidate
        /// Stop any establishment in progress (timers, pending connects).
        case stopEstablishment
        /// The transport is up: start reading and flush queued sends.
        case startTransport
        /// Close the transport; `abortive` resets it (TCP RST).
        case closeTransport(abortive: Bool)
        /// Complete every pending receive and send with this error.
        case failPending(FlowError)
    }

    /// The state and its data.
    package private(set) var current: State = .setup

    package init() {}

    /// The state as reported: `current` without its data.
    package var state: FlowConnectionState {
        switch current {
        case .setup: .setup
        case .preparing: .preparing
        case .waiting(let error): .waiting(error)
        case .ready: .ready
        case .failed(let error): .failed(error)
        case .cancelled: .cancelled
        }
    }

    /// Whether the flow is ready (cheaper than comparing `state`, for the data path).
    package var isReady: Bool {
        if case .ready = current { return true }
        return false
    }

    /// A read is outstanding (only ever while ready).
    package var readInFlight: Bool {
        if case .ready(let ready) = current { return ready.readInFlight }
        return false
    }

    /// Whether the flow may ask the socket for a read now: ready, with none outstanding.
    package var mayRequestRead: Bool {
        if case .ready(let ready) = current { return !ready.readInFlight }
        return false
    }

    /// Whether a failure to establish should leave the flow waiting (to retry when the network
    /// changes or on `restart()`) rather than failed. Apple's rule is that establishment errors
    /// wait: nothing listening, no route, an interface down, a name that does not resolve, a reset
    /// or abort during the handshake, a full buffer, a local firewall. Only errors that no change
    /// of network can cure fail at once: TLS (a certificate stays wrong), invalid or unsupported
    /// configuration, a proxy that refuses our credentials or does not speak its protocol, and
    /// our own cancellation. (Waiting costs nothing while nothing changes: a waiting flow retries
    /// only on a path change or `restart()`, so no error can make it spin.)
    package static func isRetryable(_ error: FlowError) -> Bool {
        switch error {
        case .dns:
            return true
        case .posix(let code):
            return !fatalPOSIXCodes.contains(code)
        case .tls:
            return false
        }
    }

    /// Establishment errors that fail the connection instead of leaving it waiting.
    package static let fatalPOSIXCodes: Set<Int32> = [
        // Invalid or unsupported configuration.
        EINVAL, EAFNOSUPPORT, EPROTONOSUPPORT, EPROTOTYPE, EOPNOTSUPP, ESOCKTNOSUPPORT, ENAMETOOLONG,
        EBADF, ENOTSOCK, EFAULT, EISCONN, EALREADY,
        // A proxy refused our credentials (EACCES), spoke nonsense (EPROTO) or sent too much.
        EACCES, EPROTO, EMSGSIZE,
        ECANCELED,
    ]

    /// What becomes of a send issued in the current state.
    package enum SendDecision: Equatable, Sendable {
        /// Keep it until the flow is ready (sends before `ready` leave in order then).
        case hold
        /// Hand it to the transport now.
        case write
        /// Complete it at once with this error.
        case fail(FlowError)
    }

    /// Sends wait before `ready`, go out while ready, and fail after: with the failure's error,
    /// or `ECANCELED` once cancelled.
    package var sendDecision: SendDecision {
        switch current {
        case .setup, .preparing, .waiting: return .hold
        case .ready: return .write
        case .failed(let error): return .fail(error)
        case .cancelled: return .fail(.posix(ECANCELED))
        }
    }

    /// The error a receive issued now completes with at once (nil: it waits for data). Receives
    /// may be issued in any live state; the bytes come once the flow is ready.
    package var receiveRejection: FlowError? {
        switch current {
        case .failed(let error): return error
        case .cancelled: return .posix(ECANCELED)
        default: return nil
        }
    }

    // MARK: - Life cycle

    package mutating func start() -> [Action] {
        guard case .setup = current else { return [] }
        current = .preparing
        return [.report(.preparing), .establish]
    }

    package mutating func establishmentSucceeded() -> [Action] {
        guard case .preparing = current else { return [] }
        current = .ready(Ready())
        return [.report(.ready), .startTransport]
    }

    /// Establishment ran out of candidates. `fatal` forces `failed` (for example an explicit
    /// connection timeout), otherwise retryable errors lead to `waiting`.
    package mutating func establishmentFailed(_ error: FlowError, fatal: Bool = false) -> [Action] {
        guard case .preparing = current else { return [] }
        if !fatal && Self.isRetryable(error) {
            current = .waiting(error)
            return [.report(.waiting(error))]
        }
        current = .failed(error)
        return [.report(.failed(error)), .failPending(error)]
    }

    package mutating func restart() -> [Action] {
        guard case .waiting = current else { return [] }
        current = .preparing
        return [.report(.preparing), .establish]
    }

    /// The network changed. A waiting flow tries again; others are unaffected here.
    package mutating func pathChanged(satisfied: Bool) -> [Action] {
        guard satisfied else { return [] }
        return restart()
    }

    package mutating func cancelCurrentEndpoint() -> [Action] {
        guard case .preparing = current else { return [] }
        return [.skipCandidate]
    }

    /// The established transport broke (reset, I/O error).
    package mutating func transportFailed(_ error: FlowError) -> [Action] {
        guard case .ready = current else { return [] }
        current = .failed(error)
        return [.report(.failed(error)), .failPending(error), .closeTransport(abortive: true)]
    }

    package mutating func cancel(force: Bool) -> [Action] {
        switch current {
        case .cancelled:
            return []
        case .setup, .preparing, .waiting, .ready, .failed:
            current = .cancelled
            // Pending completions go out before the final `cancelled`, so nothing follows it.
            return [
                .stopEstablishment, .closeTransport(abortive: force), .failPending(.posix(ECANCELED)),
                .report(.cancelled),
            ]
        }
    }

    // MARK: - Ready: reads and the two directions

    /// The flow asks the socket for a read (after checking `mayRequestRead`). No action list:
    /// this runs for every read, and the flow issues the read itself.
    package mutating func readRequested() {
        guard case .ready(var ready) = current else { return }
        ready.readInFlight = true
        current = .ready(ready)
    }

    /// The outstanding read ended: its bytes were handled, the peer's end came, or the socket
    /// closed.
    package mutating func readCompleted() {
        guard case .ready(var ready) = current, ready.readInFlight else { return }
        ready.readInFlight = false
        current = .ready(ready)
    }

    /// Our sending side was shut (the FIN went out). With the peer's end delivered too, the
    /// stream is over (`bothDirectionsClosed`).
    package mutating func outputShut() -> [Action] {
        guard case .ready(var ready) = current else { return [] }
        ready.outputShut = true
        current = .ready(ready)
        return ready.endOfStreamDelivered ? bothDirectionsClosed() : []
    }

    /// The peer's end of stream was handed to the application. With our sending side shut too,
    /// the stream is over (`bothDirectionsClosed`).
    package mutating func endOfStreamDelivered() -> [Action] {
        guard case .ready(var ready) = current else { return [] }
        ready.endOfStreamDelivered = true
        current = .ready(ready)
        return ready.outputShut ? bothDirectionsClosed() : []
    }

    /// A stream's two directions both ended in order: our final send went out (FIN) and the
    /// peer's end of stream was handed to the application. Nothing can pass any more, so the
    /// connection leaves `ready` (code written for Apple's framework, such as SwiftNIO's
    /// Network.framework channel, waits for that to tear down) and lets the socket go.
    private mutating func bothDirectionsClosed() -> [Action] {
        let error = FlowError.posix(ENOTCONN)
        current = .failed(error)
        return [.report(.failed(error)), .failPending(error), .closeTransport(abortive: false)]
    }
}
