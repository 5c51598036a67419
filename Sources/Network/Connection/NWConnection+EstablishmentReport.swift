import Foundation
import NetworkCore

extension NWConnection {
    /// How a connection was established: how long it took, how names were resolved and which
    /// protocol handshakes ran.
    public struct EstablishmentReport: CustomDebugStringConvertible, Sendable {
        /// One name resolution step.
        public struct Resolution: Sendable {
            /// Where the answer came from.
            public enum Source: Equatable, Hashable, Sendable {
                /// A query sent to a resolver.
                case query
                /// A cached answer still within its lifetime.
                case cache
                /// A cached answer past its lifetime, used while a fresh one was fetched.
                case expiredCache
            }

            /// The transport the DNS query used.
            public enum DNSProtocol: Equatable, Hashable, Sendable {
                /// The transport is not known; this build always reports this value.
                case unknown
                /// Plain DNS over UDP.
                case udp
                /// Plain DNS over TCP.
                case tcp
                /// DNS over TLS.
                case tls
                /// DNS over HTTPS.
                case https
            }

            /// Where the answer came from.
            public let source: Source
            /// How long the resolution took.
            public let duration: TimeInterval
            /// How many addresses it produced.
            public let endpointCount: Int
            /// The address the connection succeeded with.
            public let successfulEndpoint: NWEndpoint
            /// The address that was tried first.
            public let preferredEndpoint: NWEndpoint
            /// The DNS transport; `.unknown`, as the engine's resolver does not report it yet.
            public var dnsProtocol: DNSProtocol { storedProtocol }
            let storedProtocol: DNSProtocol
        }

        /// One protocol handshake.
        public struct Handshake: Sendable {
            /// The protocol whose handshake this was.
            public let definition: NWProtocolDefinition
            /// How long the handshake took.
            public let handshakeDuration: TimeInterval
            /// The round-trip time seen during it.
            public let handshakeRTT: TimeInterval
        }

        /// From `start` to `ready`.
        public let duration: TimeInterval
        /// How long after `start` the successful attempt began.
        public let attemptStartedAfterInterval: TimeInterval
        /// Attempts made before the successful one (after `waiting`, for example).
        public let previousAttemptCount: Int
        /// Whether a proxy carried the connection.
        public let usedProxy: Bool
        /// Whether a proxy was configured for it.
        public let proxyConfigured: Bool
        /// The proxy used, if any.
        public let proxyEndpoint: NWEndpoint?
        /// Name resolutions, in order (empty when the endpoint was an address).
        public let resolutions: [Resolution]
        /// Protocol handshakes, bottom of the stack first.
        public let handshakes: [Handshake]

        init(_ report: FlowReport, transport: FlowTransportKind) {
            duration = report.secondsToReady
            let handshake = report.handshakeSeconds ?? 0
            if let attemptStart = report.secondsToAttemptStart {
                attemptStartedAfterInterval = max(0, attemptStart)
            } else {
                attemptStartedAfterInterval = max(0, duration - handshake)
            }
            previousAttemptCount = max(0, report.attemptCount - 1)
            usedProxy = report.proxy?.endpoint != nil
            proxyConfigured = report.proxy?.configured ?? false
            proxyEndpoint = report.proxy?.endpoint.flatMap(NWEndpoint.init(flowTarget:))
            if let resolution = report.resolution, !resolution.fromLiteral,
                let successful = resolution.successfulAddress.flatMap(NWEndpoint.init),
                let preferred = resolution.preferredAddress.flatMap(NWEndpoint.init)
            {
                resolutions = [
                    Resolution(
                        source: Resolution.Source(resolution.source), duration: resolution.durationSeconds,
                        endpointCount: resolution.endpointCount, successfulEndpoint: successful,
                        preferredEndpoint: preferred, storedProtocol: .unknown)
                ]
            } else {
                resolutions = []
            }
            var steps: [Handshake] = []
            if transport == .tcp, report.handshakeDuration != nil {
                // The TCP handshake is one round trip, so its duration is the RTT seen.
                steps.append(Handshake(definition: NWProtocolTCP.definition, handshakeDuration: handshake, handshakeRTT: handshake))
            }
            if let tls = report.tlsHandshakeSeconds {
                // RTT: the TCP handshake's, the best estimate the engine has.
                steps.append(Handshake(definition: NWProtocolTLS.definition, handshakeDuration: tls, handshakeRTT: handshake))
            }
            handshakes = steps
        }

        /// A readable summary of the report.
        public var debugDescription: String {
            var lines = ["Establishment report: \(String(format: "%.3f", duration))s, previous attempts \(previousAttemptCount)"]
            for r in resolutions {
                lines.append(
                    "  resolution \(r.source) \(String(format: "%.3f", r.duration))s, \(r.endpointCount) endpoint(s), used \(r.successfulEndpoint.debugDescription)")
            }
            for h in handshakes {
                lines.append("  handshake \(h.definition.name) \(String(format: "%.3f", h.handshakeDuration))s")
            }
            if usedProxy, let proxyEndpoint { lines.append("  proxy \(proxyEndpoint.debugDescription)") }
            return lines.joined(separator: "\n")
        }
    }
}

extension NWConnection.EstablishmentReport.Resolution.Source {
    /// The engine's name for where answers came from.
    init(_ source: ResolutionSource) {
        switch source {
        case .query: self = .query
        case .cache: self = .cache
        case .expiredCache: self = .expiredCache
        }
    }
}
