import ArgumentParser
import Foundation
import Network

/// `--timeout` for `connect`: a bound on the whole establishment (resolution, every Happy
/// Eyeballs attempt, proxy handshake), so a destination whose packets vanish ends in an error
/// instead of the kernel's minutes of SYN retries.
struct EstablishmentOptions: ParsableArguments {
    @Option(help: "TCP: give up connecting after this many seconds (NWProtocolTCP.Options.connectionTimeout).")
    var timeout: Int?

    @Flag(help: "Stay in the waiting state until the network lets the connection through (a link comes up, a route or an address appears: the connection tries again by itself) instead of exiting.")
    var waitForNetwork = false

    func validate(udp: Bool) throws {
        guard let timeout else { return }
        if timeout <= 0 { throw ValidationError("--timeout must be a positive number of seconds") }
        if udp { throw ValidationError("--timeout applies to TCP only") }
    }

    /// Sets the connection timeout on the TCP options of `parameters`.
    func apply(to parameters: NWParameters) {
        guard let timeout, let tcp = parameters.defaultProtocolStack.transportProtocol as? NWProtocolTCP.Options else {
            return
        }
        tcp.connectionTimeout = timeout
    }
}

/// One line of `key=value` pairs summing up an establishment report, for scripts and tests
/// (the readable report rounds to milliseconds and its layout may change; this line keeps
/// microseconds and fixed keys). Absent facts are left out rather than written as empty.
enum EstablishmentTimingLine {
    static func format(_ report: NWConnection.EstablishmentReport) -> String {
        var fields: [(String, String)] = [
            ("duration", seconds(report.duration)),
            ("attempt_started_after", seconds(report.attemptStartedAfterInterval)),
            ("previous_attempts", String(report.previousAttemptCount)),
        ]
        if let resolution = report.resolutions.first {
            fields.append(("resolution_source", "\(resolution.source)"))
            fields.append(("resolution_duration", seconds(resolution.duration)))
            fields.append(("endpoints", String(resolution.endpointCount)))
            fields.append(("preferred", text(resolution.preferredEndpoint)))
            fields.append(("used", text(resolution.successfulEndpoint)))
        }
        for handshake in report.handshakes {
            fields.append(("\(handshake.definition.name.lowercased())_handshake", seconds(handshake.handshakeDuration)))
        }
        fields.append(("proxy", report.usedProxy ? report.proxyEndpoint.map(text) ?? "unknown" : "none"))
        return "timing " + fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
    }

    private static func seconds(_ value: TimeInterval) -> String {
        String(format: "%.6f", value)
    }

    /// `host:port`, with IPv6 addresses in brackets so the port cannot be mistaken for part of
    /// the address; no spaces, so the line splits on them.
    private static func text(_ endpoint: NWEndpoint) -> String {
        switch endpoint {
        case .hostPort(let host, let port):
            switch host {
            case .ipv6(let address): return "[\(address.debugDescription)]:\(port.rawValue)"
            case .ipv4(let address): return "\(address.debugDescription):\(port.rawValue)"
            case .name(let name, _): return "\(name):\(port.rawValue)"
            }
        default:
            return endpoint.debugDescription.replacingOccurrences(of: " ", with: "_")
        }
    }
}
