import NIOCore

/// How establishment went, for `NWConnection.EstablishmentReport`. Every connection carries
/// one, so it is kept small (the idle-memory budget is 4 KiB per connection): times are stored
/// as microseconds after `startTime` in 32 bits (71 minutes), with an all-ones value for "none".
package struct FlowReport: Sendable {
    /// Nanoseconds of the monotonic clock when `start` ran; 0 before.
    private var startNanoseconds: UInt64 = 0
    private var readyOffset = FlowReport.none
    private var attemptStartOffset = FlowReport.none
    private var handshakeMicroseconds = FlowReport.none
    private var tlsHandshakeMicroseconds = FlowReport.none
    private var attempts: UInt32 = 0
    private var resolutionBox: ResolutionBox?
    /// Application bytes handed to the transport / received from it.
    package var sentBytes: UInt64 = 0
    package var receivedBytes: UInt64 = 0

    private static let none = UInt32.max

    private final class ResolutionBox: Sendable {
        let report: ResolutionReport?
        let proxy: ProxyReport?
        init(_ report: ResolutionReport?, proxy: ProxyReport?) {
            self.report = report
            self.proxy = proxy
        }
    }

    package init() {}

    package var startTime: NIODeadline? {
        get { startNanoseconds == 0 ? nil : .uptimeNanoseconds(startNanoseconds) }
        set { startNanoseconds = newValue.map { max($0.uptimeNanoseconds, 1) } ?? 0 }
    }

    package var readyTime: NIODeadline? {
        get { instant(readyOffset) }
        set { readyOffset = offset(newValue) }
    }

    /// When the attempt that won the race began.
    package var attemptStartTime: NIODeadline? {
        get { instant(attemptStartOffset) }
        set { attemptStartOffset = offset(newValue) }
    }

    /// Establishment attempts made (1 + restarts).
    package var attemptCount: Int {
        get { Int(attempts) }
        set { attempts = UInt32(clamping: newValue) }
    }

    /// Boxed: most flows (address literals, inbound) have none, and it is large inline.
    package var resolution: ResolutionReport? {
        get { resolutionBox?.report }
        set { setBox(resolution: newValue, proxy: proxy) }
    }

    /// Boxed with the resolution, for the same reason.
    package var proxy: ProxyReport? {
        get { resolutionBox?.proxy }
        set { setBox(resolution: resolution, proxy: newValue) }
    }

    private mutating func setBox(resolution: ResolutionReport?, proxy: ProxyReport?) {
        resolutionBox = resolution == nil && proxy == nil ? nil : ResolutionBox(resolution, proxy: proxy)
    }

    package var handshakeDuration: TimeAmount? {
        get { Self.duration(handshakeMicroseconds) }
        set { handshakeMicroseconds = Self.microseconds(newValue) }
    }

    /// The TLS handshake, when the stack has TLS.
    package var tlsHandshakeDuration: TimeAmount? {
        get { Self.duration(tlsHandshakeMicroseconds) }
        set { tlsHandshakeMicroseconds = Self.microseconds(newValue) }
    }

    /// Inbound flows: one attempt, nothing resolved.
    mutating func recordAccepted() {
        attemptCount = max(attemptCount, 1)
    }

    private func instant(_ offset: UInt32) -> NIODeadline? {
        guard offset != Self.none, startNanoseconds != 0 else { return nil }
        return .uptimeNanoseconds(startNanoseconds + UInt64(offset) * 1_000)
    }

    private func offset(_ instant: NIODeadline?) -> UInt32 {
        guard let instant, startNanoseconds != 0 else { return Self.none }
        let nanoseconds = instant.uptimeNanoseconds &- startNanoseconds
        guard instant.uptimeNanoseconds >= startNanoseconds else { return 0 }
        return UInt32(clamping: min(nanoseconds / 1_000, UInt64(Self.none - 1)))
    }

    private static func duration(_ microseconds: UInt32) -> TimeAmount? {
        microseconds == none ? nil : .microseconds(Int64(microseconds))
    }

    private static func microseconds(_ duration: TimeAmount?) -> UInt32 {
        guard let duration else { return none }
        return UInt32(clamping: min(max(duration.nanoseconds / 1_000, 0), Int64(none - 1)))
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
    /// Where the answers came from.
    package var source: ResolutionSource = .query
}

/// Where a resolution's answers came from, as Apple's report names it.
package enum ResolutionSource: Sendable {
    case query, cache, expiredCache
}

/// The proxy a connection went through.
package struct ProxyReport: Sendable {
    /// Whether a proxy applied to the connection (even if it went direct in the end).
    package var configured: Bool
    /// The proxy used, if one was.
    package var endpoint: FlowTarget?
}
