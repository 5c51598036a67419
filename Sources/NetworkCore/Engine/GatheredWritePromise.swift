import NIOCore

/// The promises of writes gathered into one buffer that goes below later (a framer's output on a
/// byte stream, a WebSocket client's small frames): chained, so that all of them complete when
/// that buffer's write does.
struct GatheredWritePromise {
    private var promise: EventLoopPromise<Void>?

    /// Adds a gathered write's promise (nil: nobody waits for it).
    mutating func add(_ promise: EventLoopPromise<Void>?) {
        guard let promise else { return }
        if let existing = self.promise {
            existing.futureResult.cascade(to: promise)
        } else {
            self.promise = promise
        }
    }

    /// The promise for the gathered buffer's write, which completes the others; none is left.
    mutating func take() -> EventLoopPromise<Void>? {
        defer { promise = nil }
        return promise
    }
}
