import NIOCore
import NetworkSync

/// An event loop as a Swift `TaskExecutor`: a task that prefers it runs its jobs on the loop's
/// thread, so that a flow completion resuming it (on that thread) hands it over without waking
/// another thread, and what the task sends next is written from the loop at once. The 2025 API's
/// scoped connections and a listener's connection tasks prefer their flow's loop.
///
/// One per loop (`forEventLoop`), kept for the life of the process like the loops themselves.
package final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    private let eventLoop: any EventLoop

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }

    private static let executors = Lock<[ObjectIdentifier: EventLoopTaskExecutor]>([:])

    /// The executor of `eventLoop` (made on first use).
    package static func forEventLoop(_ eventLoop: any EventLoop) -> EventLoopTaskExecutor {
        executors.withLock { executors in
            let key = ObjectIdentifier(eventLoop as AnyObject)
            if let executor = executors[key] { return executor }
            let executor = EventLoopTaskExecutor(eventLoop: eventLoop)
            executors[key] = executor
            return executor
        }
    }
}

extension Flow {
    /// The task executor of the flow's event loop (see `EventLoopTaskExecutor`).
    package var taskExecutor: EventLoopTaskExecutor { EventLoopTaskExecutor.forEventLoop(eventLoop) }
}
