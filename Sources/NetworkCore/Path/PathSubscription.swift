import NetworkSync

/// One subscriber's hold on `PathMonitorEngine`: snapshots flow to the handler from creation
/// until `cancel()` or until the subscription is released, whichever comes first.
///
/// Owners keep it under their own lock. One that may have stopped wanting updates while it
/// subscribed (a connection cancelled meanwhile, say) simply does not store it: dropping it
/// unsubscribes, so no owner needs its own "subscribe, then check whether that was stale" code.
package final class PathSubscription: Sendable {
    private let engine: PathMonitorEngine
    /// Nil once cancelled.
    private let token: Lock<Int?>

    /// Subscribes `handler` (called on the engine's loop, first with the current inputs).
    package init(engine: PathMonitorEngine = .shared, _ handler: @escaping PathMonitorEngine.Handler) {
        self.engine = engine
        self.token = Lock(engine.subscribe(handler))
    }

    /// Stops the updates; later calls do nothing. An update already running may still finish.
    package func cancel() {
        if let token = token.withLock({ token -> Int? in defer { token = nil }; return token }) {
            engine.unsubscribe(token)
        }
    }

    /// Whether updates still flow.
    package var isActive: Bool { token.withLock { $0 != nil } }

    deinit {
        cancel()
    }
}
