import NIOCore

/// How establishment went, for `NWConnection.EstablishmentReport`.
package struct FlowReport: Sendable {
    package var startTime: NIODeadline?
    package var readyTime: NIODeadline?
    /// Establishment attempts made (1 + restarts).
    package var attemptCount = 0
    /// Boxed: most flows (address literals, inbound) have none, and it is large inline.
    package var resolution: ResolutionReport? {
        get { resolutionBox?.report }
        set { resolutionBox = newValue.map(ResolutionBox.init) }
    }
    private var resolutionBox: ResolutionBox?

    private final class ResolutionBox: Sendable {
        let report: ResolutionReport
        init(_ report: ResolutionReport) { self.report = report }
    }
    /// When the attempt that won the race began.
    package var attemptStartTime: NIODeadline?
    package var handshakeDuration: TimeAmount?
    /// The TLS handshake, when the stack has TLS.
    package var tlsHandshakeDuration: TimeAmount?
    /// Application bytes handed to the transport / received from it.
    package var sentBytes: UInt64 = 0
    package var receivedBytes: UInt64 = 0

    package init() {}

    /// Inbound flows: one attempt, nothing resolved.
    mutating func recordAccepted() {
        attemptCount = max(attemptCount, 1)
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
