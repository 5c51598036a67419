import Logging
import NIOCore
import NetworkDNS

/// A loaded PAC script, ready to answer `FindProxyForURL` questions.
///
/// Each evaluator owns a fresh Duktape heap (nothing leaks between scripts) on a dedicated
/// thread (evaluation blocks, so it never runs on an event loop), with the standard PAC helper
/// functions defined and nothing else from the host reachable: no files, no network, no module
/// loading, no output. The heap is capped in memory, and every call is bounded in time; a call
/// that runs past the limit disables the evaluator for good (`isUsable` turns false, later calls
/// fail with `.unusable`), because the script cannot be stopped and may still be running.
///
/// Loading is the expensive part (fetch, compile, helper library), so the establishment keeps
/// evaluators in `PACEvaluatorCache` and calls `evaluate` for each connection.
package final class PACEvaluator: Sendable {
    /// Where the script came from.
    package let source: PACSource
    private let worker: PACWorker

    private init(source: PACSource, worker: PACWorker) {
        self.source = source
        self.worker = worker
    }

    deinit {
        worker.shutdown()
    }

    /// Fetches or reads the script at `source` and compiles it.
    package static func load(
        from source: PACSource, configuration: PACConfiguration = PACConfiguration()
    ) async throws(PACError) -> PACEvaluator {
        let script: String
        do throws(PACError) {
            script = try await PACScriptLoader.load(source, configuration: configuration)
        } catch {
            NetworkLog.pac.debug("loading \(source.logDescription) failed: \(error.logDescription)")
            throw error
        }
        NetworkLog.pac.debug("loaded \(source.logDescription): \(script.utf8.count) bytes")
        return try await compile(script, source: source, configuration: configuration)
    }

    /// Compiles `script` on a fresh heap: installs the helpers, runs the script's top level and
    /// finds its entry point (`FindProxyForURLEx` when defined, as Microsoft's extensions
    /// specify, else `FindProxyForURL`).
    package static func compile(
        _ script: String, source: PACSource? = nil, configuration: PACConfiguration = PACConfiguration()
    ) async throws(PACError) -> PACEvaluator {
        guard script.utf8.count <= configuration.maximumScriptSize else {
            throw .scriptTooLarge(limit: configuration.maximumScriptSize)
        }
        let worker = PACWorker(timeLimit: configuration.timeLimit, memoryLimit: configuration.memoryLimit)
        let environment = configuration.environment
        let budget = worker.budget
        do throws(PACError) {
            // The context refers to the worker strongly: it lives on the worker's own thread and is
            // released with the heap when that thread ends, so this makes no lasting cycle.
            try await worker.perform { [worker] threadState throws(PACError) in
                let context = DuktapeHeapContext(budget: budget, environment: environment) { message in
                    worker.fatal(message)
                }
                let heap: DuktapeHeap
                do throws(DuktapeFailure) {
                    heap = try DuktapeHeap(context: context)
                    try PACNativeFunctions.install(on: heap)
                    try heap.run(PACHelperLibrary.source)
                } catch {
                    throw error.hitMemoryLimit
                        ? PACError.memoryLimitExceeded(limit: budget.limit) : .engineFailure("setup: \(error.message)")
                }
                do throws(DuktapeFailure) {
                    try heap.run(script)
                } catch {
                    throw error.hitMemoryLimit ? PACError.memoryLimitExceeded(limit: budget.limit) : .scriptError(error.message)
                }
                let probe = """
                    typeof FindProxyForURLEx === 'function' ? 'FindProxyForURLEx' :
                    typeof FindProxyForURL === 'function' ? 'FindProxyForURL' : ''
                    """
                let entryPoint: DuktapeValue
                do throws(DuktapeFailure) {
                    entryPoint = try heap.run(probe)
                } catch {
                    throw .scriptError(error.message)
                }
                guard case .string(let name) = entryPoint, !name.isEmpty else { throw .missingEntryPoint }
                threadState.heap = heap
                threadState.entryPoint = name
            }
        } catch {
            worker.shutdown()
            throw error
        }
        return PACEvaluator(source: source ?? .script(script), worker: worker)
    }

    /// Calls `FindProxyForURL(url, host)` and returns the script's answer as written.
    ///
    /// `host` is lowercased first: scripts compare host names with case-sensitive string
    /// functions, and browsers hand them canonical (lowercase) names. IPv6 literals go without
    /// brackets.
    package func findProxy(url: String, host: String) async throws(PACError) -> String {
        let limit = worker.budget.limit
        let host = host.lowercased()
        return try await worker.perform { threadState throws(PACError) in
            guard let heap = threadState.heap else { throw .unusable("no script is loaded") }
            let value: DuktapeValue
            do throws(DuktapeFailure) {
                value = try heap.call(threadState.entryPoint, arguments: [url, host])
            } catch {
                throw error.hitMemoryLimit ? PACError.memoryLimitExceeded(limit: limit) : .evaluationFailed(error.message)
            }
            switch value {
            case .string(let answer): return answer
            case .other(let type): throw .evaluationFailed("returned \(type) instead of a string")
            }
        }
    }

    /// The proxies to try for `url` (whose host part is `host`), in order. See
    /// `PACProxyChoice.parse(_:)` for how the answer is read.
    package func evaluate(url: String, host: String) async throws(PACError) -> [PACProxyChoice] {
        do throws(PACError) {
            let choices = PACProxyChoice.parse(try await findProxy(url: url, host: host))
            // The parsed choices, not the script's raw answer; the host, not the URL (a path may be private).
            NetworkLog.pac.debug(
                "\(source.logDescription) for host \(host): \(choices.map { "\($0)" }.joined(separator: "; "))")
            return choices
        } catch {
            NetworkLog.pac.debug("\(source.logDescription) for host \(host): \(error.logDescription)")
            throw error
        }
    }

    /// `evaluate(url:host:)` for callers on an event loop: the work runs on the evaluator's
    /// thread and the future completes on `eventLoop`.
    package func evaluate(url: String, host: String, on eventLoop: any EventLoop) -> EventLoopFuture<[PACProxyChoice]> {
        let promise = eventLoop.makePromise(of: [PACProxyChoice].self)
        promise.completeWithTask { try await self.evaluate(url: url, host: host) }
        return promise.futureResult
    }

    /// False once a call ran past the time limit or the engine failed fatally.
    package var isUsable: Bool { worker.disabledReason == nil }

    /// The kernel id of the thread that runs the script (diagnostics: a disabled evaluator whose
    /// script never stopped leaves this thread spinning at idle priority).
    package var threadID: Int32? { worker.threadID }

    /// Bytes the script's heap holds now (for tests and diagnostics).
    package var memoryInUse: Int { worker.budget.bytesInUse }
    /// The most bytes the script's heap ever held (for tests and diagnostics).
    package var peakMemory: Int { worker.budget.peakBytes }
}
