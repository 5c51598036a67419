import Logging
import NIOCore
import NetworkDNS

/// The listener's log lines' metadata and texts.
extension FlowListener {
    var logMetadata: Logger.Metadata { ["listener": "L\(logID)"] }

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
