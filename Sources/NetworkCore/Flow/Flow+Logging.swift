import Logging
import NetworkDNS

/// The flow's log lines' metadata, built only when a line is written.
extension Flow {
    /// The flow's name, the metadata every line about it carries.
    var logMetadata: Logger.Metadata { LogIDs.connectionMetadata(logID) }

    func startMetadata() -> Logger.Metadata {
        var metadata = logMetadata
        let remote: String
        if let target = setup?.configuration.target {
            if case .address(let address) = target { remote = address.logText } else { remote = "\(target)" }
        } else {
            remote = transport.remoteAddress?.logText ?? "unknown"
        }
        metadata["endpoint"] = "\(remote)"
        metadata["transport"] = "\(transportKind)"
        metadata["direction"] = "\(setup == nil ? "inbound" : "outbound")"
        if setup?.configuration.tls != nil || serverSecurity != nil || transport.isDTLSPeer { metadata["security"] = "\(transportKind == .udp ? "dtls" : "tls")" }
        return metadata
    }

    static func stateName(_ state: FlowConnectionState) -> String {
        switch state {
        case .setup: return "setup"
        case .waiting: return "waiting"
        case .preparing: return "preparing"
        case .ready: return "ready"
        case .failed: return "failed"
        case .cancelled: return "cancelled"
        }
    }

    func stateMetadata(_ state: FlowConnectionState) -> Logger.Metadata {
        var metadata = logMetadata
        switch state {
        case .waiting(let error):
            metadata["error"] = "\(error.logDescription)"
            metadata["retry"] = "on a path change or restart()"
        case .failed(let error):
            metadata["error"] = "\(error.logDescription)"
        case .ready:
            if let local = transport.channel?.localAddress { metadata["local"] = "\(local.logText)" }
            if let remote = transport.remoteAddress ?? report.resolution?.successful {
                metadata["remote"] = "\(remote.logText)"
            }
        default:
            break
        }
        return metadata
    }
}
