import NIOCore

/// Lets at most `linesPerInterval` log lines of one kind through per `interval` and counts the
/// rest, so that a hostile peer (a flood of datagrams from new addresses, of connections over the
/// limit, of failed handshakes) cannot turn an enabled debug log into a second flood. The next
/// line let through says how many were held back.
package struct LogRateLimiter: Sendable {
    package let linesPerInterval: Int
    package let interval: TimeAmount
    private var windowStart: NIODeadline?
    private var used = 0
    private var suppressed = 0

    package init(linesPerInterval: Int = 10, interval: TimeAmount = .seconds(1)) {
        self.linesPerInterval = linesPerInterval
        self.interval = interval
    }

    /// Whether a line may be written at `now`; when it may, how many were held back before it.
    package mutating func permit(now: NIODeadline) -> (allowed: Bool, suppressed: Int) {
        if let windowStart, now - windowStart < interval {
            guard used < linesPerInterval else {
                suppressed += 1
                return (false, 0)
            }
        } else {
            windowStart = now
            used = 0
        }
        used += 1
        defer { suppressed = 0 }
        return (true, suppressed)
    }
}
