import Dispatch

/// A task executor that runs its jobs on a serial dispatch queue of its own.
///
/// On Linux, Swift concurrency's global executor and `OperationQueue` draw threads from the
/// same libdispatch pool, which grows about a thread a second while its threads are blocked:
/// beside sleeping `OperationQueue` workers, a task on the global executor can wait seconds to
/// run. A serial queue is always given a thread, so tasks preferring this executor run
/// whatever blocks the pool.
public final class SerialQueueExecutor: TaskExecutor {
    private let queue: DispatchQueue

    public init(label: String) { queue = DispatchQueue(label: label) }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
