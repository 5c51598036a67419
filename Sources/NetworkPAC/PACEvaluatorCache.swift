import NetworkSync

/// Loaded PAC evaluators, one per script location, shared by every connection that uses it.
///
/// Loading (fetching, compiling) happens once per source; concurrent first requests wait for
/// the same load. A failed load is not remembered, so the next connection retries (the PAC
/// server may be back); an evaluator that became unusable (time limit, fatal error) is replaced
/// by a fresh load of the same source. The configuration of the first load of a source is the
/// one used.
package final class PACEvaluatorCache: Sendable {
    /// The process-wide cache the establishment uses.
    package static let shared = PACEvaluatorCache()

    private struct Entry {
        let id: Int
        let load: Task<PACEvaluator, any Error>
    }

    private struct State {
        var entries: [PACSource: Entry] = [:]
        var nextID = 0
    }

    private let state = Lock(State())

    /// An empty cache (tests use their own; the engine uses `shared`).
    package init() {}

    /// The evaluator for `source`, loading it if no usable one is cached.
    package func evaluator(
        for source: PACSource, configuration: PACConfiguration = PACConfiguration()
    ) async throws(PACError) -> PACEvaluator {
        let entry = state.withLock { state in
            if let existing = state.entries[source] { return existing }
            state.nextID += 1
            let entry = Entry(id: state.nextID, load: Task { try await PACEvaluator.load(from: source, configuration: configuration) })
            state.entries[source] = entry
            return entry
        }
        do {
            let evaluator = try await entry.load.value
            guard evaluator.isUsable else {
                forget(source, id: entry.id)
                return try await PACEvaluator.load(from: source, configuration: configuration).cached(in: self, for: source)
            }
            return evaluator
        } catch {
            forget(source, id: entry.id)
            throw (error as? PACError) ?? .loadFailed("\(error)")
        }
    }

    /// Drops the cached evaluator for `source` (the configuration changed, or the script did).
    package func invalidate(_ source: PACSource) {
        _ = state.withLock { $0.entries.removeValue(forKey: source) }
    }

    /// Puts an already loaded evaluator in place of whatever is cached for `source`.
    fileprivate func store(_ evaluator: PACEvaluator, for source: PACSource) {
        state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            state.entries[source] = Entry(id: id, load: Task { evaluator })
        }
    }

    // Removes the entry only if it is still the one that failed: a newer load may have replaced it.
    private func forget(_ source: PACSource, id: Int) {
        state.withLock { state in
            if state.entries[source]?.id == id { state.entries[source] = nil }
        }
    }
}

private extension PACEvaluator {
    /// Stores the evaluator in `cache` and returns it, for chaining after a reload.
    func cached(in cache: PACEvaluatorCache, for source: PACSource) -> PACEvaluator {
        cache.store(self, for: source)
        return self
    }
}
