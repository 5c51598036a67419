#if canImport(Glibc)
import Glibc
#endif
import CDuktape
import Foundation
import PeerSupport
import Testing
@testable import NetworkPAC

/// The two ways the engine can escape the normal error path, and what is left behind: a loop
/// that never allocates (cannot be stopped; its thread is demoted) and a fatal engine error
/// (reported instead of aborting the process; its thread is parked).
@Suite struct PACEngineFailureTests {
    @Test func aLoopThatNeverAllocatesIsAbandonedAtIdlePriority() async throws {
        let evaluator = try await PACEvaluator.compile(
            "function FindProxyForURL(url, host) { while (true) {} }",
            configuration: PACTestEnvironment.configuration(timeLimit: 0.3))
        await #expect(throws: PACError.timedOut(seconds: 0.3)) {
            try await withTimeout(seconds: 10, "the time limit") {
                try await evaluator.findProxy(url: "http://a.test/", host: "a.test")
            }
        }
        #expect(!evaluator.isUsable)
        await #expect(throws: PACError.unusable("the script ran longer than 0.3 s")) {
            try await evaluator.findProxy(url: "http://a.test/", host: "a.test")
        }
        let thread = try #require(evaluator.threadID)
        // 5 is SCHED_IDLE: the spinning thread only gets CPU time nobody else wants.
        #expect(sched_getscheduler(pid_t(thread)) == 5)
    }

    @Test func aFatalEngineErrorDisablesTheEvaluatorInsteadOfAborting() async throws {
        let worker = PACWorker(timeLimit: 5, memoryLimit: 1 << 20)
        let budget = worker.budget
        do {
            try await worker.perform { [worker] _ throws(PACError) in
                let context = DuktapeHeapContext(budget: budget, environment: PACTestEnvironment.environment) {
                    worker.fatal($0)
                }
                let heap: DuktapeHeap
                do throws(DuktapeFailure) {
                    heap = try DuktapeHeap(context: context)
                } catch {
                    throw .engineFailure(error.message)
                }
                // Throwing with nothing to throw, outside any protected call: an error no
                // catch point can take, which Duktape escalates to its fatal handler.
                duk_throw_raw(heap.rawContext)
            }
            Issue.record("the engine did not fail")
        } catch {
            guard case .engineFailure(let message) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(!message.isEmpty)
        }
        #expect(worker.disabledReason?.hasPrefix("fatal engine error") == true)
        await #expect(throws: PACError.self) {
            try await worker.perform { _ throws(PACError) in 1 }
        }
    }
}
