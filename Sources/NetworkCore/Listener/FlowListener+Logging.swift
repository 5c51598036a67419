import Logging
import NIOCore
import NetworkDNS

/// The listener's log lines' metadata and texts.
extension FlowListener {
    var logMetadata: Logger.Metadata { ["listener": "L\(logID)"] }

    /// Logs a line about a datagram peer or a refused connection, at most a few a second
    /// (`LogRateLimiter`): such lines come as fast as an attacker sends.
    func logPeerEvent(_ level: Logger.Level, _ message: @autoclosure () -> String) {
        guard NetworkLog.listener.logLevel <= level else { return }
        let (allowed, suppressed) = peerEventLog.permit(now: .now())
        guard allowed else { return }
        let note = suppressed > 0 ? " (\(suppressed) similar lines held back)" : ""
        NetworkLog.listener.log(level: level, "\(message())\(note)", metadata: logMetadata)
    }

    static func text(_ address: SocketAddress?) -> String {
        address.map { $0.logText } ?? "unknown peer"
    }

    static func stateText(_ state: FlowListenerState) -> String {
        switch state {
        case .setup: return "setup"
        case .waiting(let error): return "waiting: \(error.logDescription)"
        case .ready: return "ready"
        case .failed(let error): return "failed: \(error.logDescription)"
        case .cancelled: return "cancelled"
        }
    }
}
