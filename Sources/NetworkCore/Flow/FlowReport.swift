import NIOCore

/// How establishment went, for `NWConnection.EstablishmentReport`.
package struct FlowReport: Sendable {
    package var startTime: NIODeadline?
    package var readyTime: NIODeadline?
    /// Establishment attempts made (1 + restarts).
    package var attemptCount = 0
    package var resolution: ResolutionReport?
    package var handshakeDuration: TimeAmount?
    /// Application bytes handed to the transport / received from it.
    package var sentBytes: UInt64 = 0
    package var receivedBytes: UInt64 = 0

    package init() {}

    mutating func recordAcceptedOrShared(remote: SocketAddress?) {
        attemptCount = max(attemptCount, 1)
        if let remote {
            resolution = ResolutionReport(
                duration: .nanoseconds(0), endpointCount: 1, successful: remote, preferred: remote, fromLiteral: true
            )
        }
    }
}

/// One name resolution step.
package struct ResolutionReport: Sendable {
    package var duration: TimeAmount
    package var endpointCount: Int
    package var successful: SocketAddress?
    package var preferred: SocketAddress?
    /// The target was an address already: nothing was looked up.
    package var fromLiteral: Bool
}
