import NIOCore
import Testing

@testable import NetworkDNS

/// The limiter that keeps a flood of hostile peers from flooding the log.
@Suite("DNS.LogRateLimiter")
struct LogRateLimiterTests {
    static let start = NIODeadline.uptimeNanoseconds(5_000_000_000)

    @Test func letsTheFirstLinesOfEachIntervalThroughAndCountsTheRest() {
        var limiter = LogRateLimiter(linesPerInterval: 3, interval: .seconds(1))
        let first = (0..<10).map { limiter.permit(now: Self.start + .milliseconds($0)).allowed }
        #expect(first == [true, true, true] + Array(repeating: false, count: 7))
        // The next interval's first line reports the seven held back, once.
        #expect(limiter.permit(now: Self.start + .milliseconds(1_001)) == (true, 7))
        #expect(limiter.permit(now: Self.start + .milliseconds(1_002)) == (true, 0))
    }

    @Test func aQuietLogIsNeverHeldBack() {
        var limiter = LogRateLimiter(linesPerInterval: 1, interval: .seconds(1))
        for second in 0..<5 {
            #expect(limiter.permit(now: Self.start + .seconds(Int64(second))) == (true, 0))
        }
    }
}
