import NIOCore
import NIOPosix
import Testing
@testable import NetworkPAC

/// One evaluator shared by many callers at once, and the future-based entry point for callers
/// on an event loop.
@Suite struct PACConcurrencyTests {
    static let script = "function FindProxyForURL(url, host) { return 'PROXY ' + host + ':' + url.length; }"

    @Test func concurrentCallsEachGetTheirOwnAnswer() async throws {
        let evaluator = try await PACEvaluator.compile(Self.script, configuration: PACTestEnvironment.configuration())
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let url = "http://h\(index).test/" + String(repeating: "x", count: index)
                    let choices = try await evaluator.evaluate(url: url, host: "h\(index).test")
                    return choices == [.httpConnect(host: "h\(index).test", port: url.count)]
                }
            }
            for try await matched in group { #expect(matched) }
        }
    }

    @Test func futureAPICompletesOnTheCallersEventLoop() async throws {
        let evaluator = try await PACEvaluator.compile(Self.script, configuration: PACTestEnvironment.configuration())
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let future = evaluator.evaluate(url: "http://a.test/", host: "a.test", on: eventLoop)
        let onLoop = try await future.map { _ in eventLoop.inEventLoop }.get()
        #expect(onLoop)
        #expect(try await future.get() == [.httpConnect(host: "a.test", port: 14)])
    }
}
