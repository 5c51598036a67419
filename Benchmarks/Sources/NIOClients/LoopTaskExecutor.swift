import NIOCore

/// An event loop as a task executor: the job runs on the loop's thread.
final class LoopTaskExecutor: TaskExecutor {
    let loop: EventLoop
    init(loop: EventLoop) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
