import NIOCore
@testable import NetworkCore
import Testing

/// The establishment report's times in seconds, as the facade's report reads them.
@Suite("Core.FlowReportSeconds")
struct FlowReportSecondsTests {
    @Test("nothing started: not ready, 0 to ready, no attempt start or handshakes")
    func empty() {
        let report = FlowReport()
        #expect(!report.isReady)
        #expect(report.secondsToReady == 0)
        #expect(report.secondsToAttemptStart == nil)
        #expect(report.handshakeSeconds == nil)
        #expect(report.tlsHandshakeSeconds == nil)
    }

    @Test("times after start, in seconds (kept to the microsecond)")
    func started() {
        var report = FlowReport()
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        report.startTime = start
        #expect(!report.isReady)
        #expect(report.secondsToReady == 0)
        report.attemptStartTime = start + .milliseconds(20)
        report.readyTime = start + .milliseconds(250)
        report.handshakeDuration = .microseconds(1_500)
        report.tlsHandshakeDuration = .milliseconds(3)
        #expect(report.isReady)
        #expect(report.secondsToReady == 0.25)
        #expect(report.secondsToAttemptStart == 0.02)
        #expect(report.handshakeSeconds == 0.0015)
        #expect(report.tlsHandshakeSeconds == 0.003)
    }

    @Test("a resolution's duration and addresses")
    func resolution() throws {
        let successful = try SocketAddress(ipAddress: "192.0.2.1", port: 80)
        let resolution = ResolutionReport(
            duration: .milliseconds(12), endpointCount: 2, successful: successful, preferred: nil, fromLiteral: false)
        #expect(resolution.durationSeconds == 0.012)
        #expect(resolution.successfulAddress == .ipv4(bytes: [192, 0, 2, 1], port: 80))
        #expect(resolution.preferredAddress == nil)
    }
}
