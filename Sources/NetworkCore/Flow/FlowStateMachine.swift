#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The states of one flow, mirroring `NWConnection.State`.
package enum FlowConnectionState: Equatable, Hashable, Sendable {
    case setup
    case waiting(FlowError)
    case preparing
    case ready
    case failed(FlowError)
    case cancelled
}

/// The connection life cycle as a value type: one `mutating` method per event, each returning the
/// actions the flow must perform. No I/O happens here, so every transition is unit-testable.
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
/// | ready | transport failed | failed(e) | report, failPending(e), closeTransport(abortive) |
/// | ready | both directions closed (stream) | failed(ENOTCONN) | report, failPending, closeTransport |
/// | setup, preparing, waiting, ready, failed | cancel | cancelled | stopEstablishment, closeTransport, failPending(ECANCELED), report |
/// | setup, preparing, waiting, ready, failed | forceCancel | cancelled | as cancel, but the close is abortive |
/// | cancelled | anything | cancelled | none |
package struct FlowStateMachine: Sendable {
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

    package private(set) var state: FlowConnectionState = .setup

    package init() {}

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
        switch state {
        case .setup, .preparing, .waiting: return .hold
        case .ready: return .write
        case .failed(let error): return .fail(error)
        case .cancelled: return .fail(.posix(ECANCELED))
        }
    }

    /// The error a receive issued now completes with at once (nil: it waits for data). Receives
    /// may be issued in any live state; the bytes come once the flow is ready.
    package var receiveRejection: FlowError? {
        switch state {
        case .failed(let error): return error
        case .cancelled: return .posix(ECANCELED)
        default: return nil
        }
    }

    package mutating func start() -> [Action] {
        guard case .setup = state else { return [] }
        state = .preparing
        return [.report(.preparing), .establish]
    }

    package mutating func establishmentSucceeded() -> [Action] {
        guard case .preparing = state else { return [] }
        state = .ready
        return [.report(.ready), .startTransport]
    }

    /// Establishment ran out of candidates. `fatal` forces `failed` (for example an explicit
    /// connection timeout), otherwise retryable errors lead to `waiting`.
    package mutating func establishmentFailed(_ error: FlowError, fatal: Bool = false) -> [Action] {
        guard case .preparing = state else { return [] }
        if !fatal && Self.isRetryable(error) {
            state = .waiting(error)
            return [.report(.waiting(error))]
        }
        state = .failed(error)
        return [.report(.failed(error)), .failPending(error)]
    }

    package mutating func restart() -> [Action] {
        guard case .waiting = state else { return [] }
        state = .preparing
        return [.report(.preparing), .establish]
    }

    /// The network changed. A waiting flow tries again; others are unaffected here.
    package mutating func pathChanged(satisfied: Bool) -> [Action] {
        guard satisfied else { return [] }
        return restart()
    }

    package mutating func cancelCurrentEndpoint() -> [Action] {
        guard case .preparing = state else { return [] }
        return [.skipCandidate]
    }

    /// The established transport broke (reset, I/O error).
    package mutating func transportFailed(_ error: FlowError) -> [Action] {
        guard case .ready = state else { return [] }
        state = .failed(error)
        return [.report(.failed(error)), .failPending(error), .closeTransport(abortive: true)]
    }

    /// A stream's two directions both ended in order: our final send went out (FIN) and the
    /// peer's end of stream was handed to the application. Nothing can pass any more, so the
    /// connection leaves `ready` (code written for Apple's framework, such as SwiftNIO's
    /// Network.framework channel, waits for that to tear down) and lets the socket go.
    package mutating func bothDirectionsClosed() -> [Action] {
        guard case .ready = state else { return [] }
        let error = FlowError.posix(ENOTCONN)
        state = .failed(error)
        return [.report(.failed(error)), .failPending(error), .closeTransport(abortive: false)]
    }

    package mutating func cancel(force: Bool) -> [Action] {
        switch state {
        case .cancelled:
            return []
        case .setup, .preparing, .waiting, .ready, .failed:
            state = .cancelled
            // Pending completions go out before the final `cancelled`, so nothing follows it.
            return [
                .stopEstablishment, .closeTransport(abortive: force), .failPending(.posix(ECANCELED)),
                .report(.cancelled),
            ]
        }
    }
}
