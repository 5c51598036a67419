import NIOCore
import NIOEmbedded
import NIOTLS
import Testing

@testable import NetworkCore

/// `TLSHandshakeWaiter` reports every handshake exactly once, however the channel ends.
@Suite("Core.TLSHandshakeWaiter")
struct TLSHandshakeWaiterTests {
    /// Watches the waiter's promise (on the embedded loop, which is the test's own thread).
    private final class Outcome: @unchecked Sendable {
        var result: Result<String?, any Error>?
    }

    private func waiting(on channel: EmbeddedChannel) throws -> (TLSHandshakeWaiter, EventLoopPromise<String?>, Outcome) {
        let promise = channel.eventLoop.makePromise(of: String?.self)
        let outcome = Outcome()
        promise.futureResult.whenComplete { outcome.result = $0 }
        let waiter = TLSHandshakeWaiter(promise: promise, verifyBlock: false)
        try channel.pipeline.syncOperations.addHandler(waiter)
        return (waiter, promise, outcome)
    }

    @Test("a waiter taken out of the pipeline before the outcome fails the handshake (found by LeakSanitizer)")
    func removedBeforeTheOutcomeFails() throws {
        // An accepted connection whose peer left before the application started it: its channel
        // has closed already, so the waiter sees no channelInactive, only the pipeline's teardown.
        // Before, the wait never ended: the flow stayed preparing, and leaked, for ever.
        let channel = EmbeddedChannel()
        let (waiter, promise, outcome) = try waiting(on: channel)
        try channel.pipeline.syncOperations.removeHandler(waiter).wait()
        guard case .failure(let error) = outcome.result else {
            Issue.record("the handshake was not reported: \(String(describing: outcome.result))")
            promise.succeed(nil)  // NIO traps on a promise dropped unfulfilled.
            return
        }
        #expect(error as? FlowError == .tls(TLSStatus.closedAbort))
        Self.finish(channel)
    }

    @Test("a completed handshake is reported once, and the waiter's removal adds nothing")
    func completedIsReportedOnce() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        let (_, _, outcome) = try waiting(on: channel)
        channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "h2"))
        guard case .success(let negotiated) = outcome.result else {
            Issue.record("expected success, got \(String(describing: outcome.result))")
            return
        }
        #expect(negotiated == "h2")
        Self.finish(channel)
    }

    @Test("a channel that goes inactive mid-handshake fails it")
    func inactiveFails() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        let (_, _, outcome) = try waiting(on: channel)
        try channel.close().wait()
        guard case .failure(let error) = outcome.result else {
            Issue.record("expected a failure, got \(String(describing: outcome.result))")
            return
        }
        #expect(error as? FlowError == .tls(TLSStatus.closedAbort))
        Self.finish(channel)
    }

    /// Closes the channel and lets its loop tear the pipeline down, so nothing is left behind.
    private static func finish(_ channel: EmbeddedChannel) {
        _ = try? channel.finish()
        channel.embeddedEventLoop.run()
    }
}
