#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Logging
import NetworkDNS
import NetworkSync
import Synchronization

/// The dedicated thread that owns one script's Duktape heap and runs its work, one job at a time.
///
/// Why a thread of its own: evaluation blocks (name lookups, and the script itself may spin), so
/// it must stay off NIO event loops and off Swift's cooperative pool; and Duktape heaps are
/// single-threaded, so one owner thread is the simplest correct way to share a heap between
/// callers.
///
/// Why a time limit here: Debian's Duktape is built without `DUK_USE_EXEC_TIMEOUT_CHECK` (no
/// interrupt hook), so a running script cannot be stopped from outside. When a job runs past
/// its limit, the waiting caller is released with `PACError.timedOut`, the worker is disabled
/// (queued and later jobs fail with `.unusable`) and the heap is poisoned so that every further
/// allocation fails, which ends any runaway loop that allocates. A loop that never allocates
/// cannot be ended; its thread is moved to the `SCHED_IDLE` scheduling class, so it only uses
/// CPU time nothing else wants, until the process exits (docs/pac.md).
final class PACWorker: Sendable {
    private struct Job: Sendable {
        let id: Int
        let run: @Sendable (PACWorkerThreadState) -> Void
        let fail: @Sendable (PACError) -> Void
    }

    private struct State {
        var jobs: [Job] = []
        var current: Job?
        var nextID = 0
        var disabledReason: String?
        var stopping = false
    }

    private let state = Lock(State())
    private let wake = DispatchSemaphore(value: 0)
    private let timeLimit: Double
    /// The heap's memory account, shared with the heap once it exists.
    let budget: DuktapeMemoryBudget
    // The kernel's id of the worker's thread (0 until it runs), to demote a runaway thread.
    private let kernelThreadID = Atomic<Int32>(0)

    /// Starts the worker's thread; jobs run under `timeLimit` against a heap capped at `memoryLimit`.
    init(timeLimit: Double, memoryLimit: Int) {
        self.timeLimit = timeLimit
        self.budget = DuktapeMemoryBudget(limit: memoryLimit)
        let thread = Thread { [self] in self.threadMain() }
        thread.name = "PAC evaluator"
        // Duktape's compiler recurses on the C stack for deeply nested source; give it room.
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Why the worker no longer runs jobs, or nil while it does.
    var disabledReason: String? { state.withLock { $0.disabledReason } }

    /// Runs `work` on the worker's thread and returns its result, or fails with `.timedOut` if it
    /// takes longer than the time limit (counted from when it starts, not from when it queued).
    func perform<T: Sendable>(
        _ work: @escaping @Sendable (PACWorkerThreadState) throws(PACError) -> T
    ) async throws(PACError) -> T {
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let once = PACResumeOnce(continuation)
                let id = state.withLock { state in
                    state.nextID += 1
                    return state.nextID
                }
                let job = Job(
                    id: id,
                    run: { threadState in
                        do throws(PACError) {
                            once.resume(.success(try work(threadState)))
                        } catch {
                            once.resume(.failure(error))
                        }
                    },
                    fail: { error in once.resume(.failure(error)) })
                let refusal: String? = state.withLock { state in
                    if let reason = state.disabledReason { return reason }
                    // After shutdown the thread may be gone; a job queued now would wait forever.
                    if state.stopping { return "the evaluator was shut down" }
                    state.jobs.append(job)
                    return nil
                }
                if let refusal {
                    job.fail(.unusable(refusal))
                } else {
                    wake.signal()
                }
            }
        } catch let error as PACError {
            throw error
        } catch {
            throw .engineFailure(String(describing: error))
        }
    }

    /// Stops the thread after the queued jobs; called when the evaluator goes away.
    func shutdown() {
        state.withLock { $0.stopping = true }
        wake.signal()
    }

    /// Called (on the worker's thread) by Duktape's fatal handler, just before it parks the thread.
    func fatal(_ message: String) {
        disable(because: "fatal engine error: \(message)", failing: .engineFailure(message))
    }

    /// The kernel's id of the evaluator's thread, once it started (diagnostics and tests).
    var threadID: Int32? {
        let id = kernelThreadID.load(ordering: .relaxed)
        return id > 0 ? id : nil
    }

    /// The thread's loop: one job at a time, each under a timer, until shut down or disabled.
    private func threadMain() {
        kernelThreadID.store(Self.currentKernelThreadID(), ordering: .relaxed)
        let threadState = PACWorkerThreadState()
        while true {
            wake.wait()
            let next: Job?? = state.withLock { state in
                if state.disabledReason != nil { return .some(nil) }
                if !state.jobs.isEmpty {
                    let job = state.jobs.removeFirst()
                    state.current = job
                    return .some(job)
                }
                return state.stopping ? .some(nil) : .none
            }
            guard let next else { continue }
            guard let job = next else { break }
            let limit = timeLimit
            let timer = DispatchWorkItem { [weak self] in
                self?.disable(because: "the script ran longer than \(limit) s", failing: .timedOut(seconds: limit), onlyDuring: job.id)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit, execute: timer)
            job.run(threadState)
            timer.cancel()
            state.withLock { $0.current = nil }
        }
        // Destroying the heap here, on its own thread, after any runaway job has returned.
        threadState.heap = nil
    }

    /// Fails the running job with `error` and every queued one with `.unusable`, and poisons the
    /// heap. Only the first reason counts. With `onlyDuring`, nothing happens unless that job is
    /// still running (a timer that fires just as its job finishes must not disable the worker).
    private func disable(because reason: String, failing error: PACError, onlyDuring jobID: Int? = nil) {
        let decision: (current: Job?, queued: [Job])? = state.withLock { state in
            guard state.disabledReason == nil else { return nil }
            if let jobID, state.current?.id != jobID { return nil }
            state.disabledReason = reason
            let queued = state.jobs
            state.jobs = []
            return (state.current, queued)
        }
        guard let (current, queued) = decision else { return }
        NetworkLog.pac.debug("evaluator disabled: \(error.logDescription)")
        budget.poison()
        demoteThread()
        current?.fail(error)
        for job in queued { job.fail(.unusable(reason)) }
        // Lets the thread leave its loop as soon as the running job (if any) returns.
        wake.signal()
    }
}

extension PACWorker {
    /// Puts the worker's thread in Linux's `SCHED_IDLE` class: if the script never stops, it
    /// spins only when the CPU would otherwise be idle. Lowering one's own threads needs no
    /// privilege. Harmless when the thread is idle or already gone.
    private func demoteThread() {
        guard let id = threadID else { return }
        var parameters = sched_param()
        parameters.sched_priority = 0
        // SCHED_IDLE is 5 on Linux; glibc only names it under _GNU_SOURCE, which Swift's Glibc
        // module does not define.
        _ = sched_setscheduler(pid_t(id), 5, &parameters)
    }

    /// The calling thread's kernel id, read from /proc/thread-self ("PID/task/TID"), because
    /// gettid() is not visible to Swift on every glibc.
    fileprivate static func currentKernelThreadID() -> Int32 {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
        guard count > 0 else { return 0 }
        let text = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "/").last.flatMap { Int32($0) } ?? 0
    }
}

/// What jobs keep on the worker's thread between calls: the heap, once loaded.
final class PACWorkerThreadState {
    var heap: DuktapeHeap?
    /// The entry point the loaded script defines (`FindProxyForURLEx` preferred).
    var entryPoint = "FindProxyForURL"
}

/// Resumes a continuation exactly once, whichever of completion, time-out or fatal error comes
/// first; later attempts are ignored.
final class PACResumeOnce<T: Sendable>: Sendable {
    private let continuation: Lock<CheckedContinuation<T, any Error>?>

    /// Wraps `continuation`, which must not be resumed elsewhere.
    init(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation = Lock(continuation)
    }

    /// Resumes with `result` if nothing resumed it yet.
    func resume(_ result: Result<T, PACError>) {
        guard let continuation = continuation.withLock({ $0.take() }) else { return }
        continuation.resume(with: result.mapError { $0 as any Error })
    }
}
