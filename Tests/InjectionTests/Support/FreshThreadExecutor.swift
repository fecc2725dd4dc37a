import Foundation

/// Runs each job of the tasks that prefer it on a thread started for that job alone, which exits once the job
/// has run: a task's synchronous code then runs on a thread that has never used the library, yet sees the
/// task-local values the task inherited (a raw thread sees none).
///
/// ```swift
/// let executor = FreshThreadExecutor()
/// let task = Task(executorPreference: executor) { try container.resolve(Session.self) }
/// ```
/// A task does not retain its preferred executor: keep this alive until the task has finished.
final class FreshThreadExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        onThread { job.runSynchronously(on: executor) }
    }
}
