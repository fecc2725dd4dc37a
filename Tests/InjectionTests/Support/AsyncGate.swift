import Foundation

/// A gate that tasks wait at by suspending, never by blocking a thread (tests share a small pool of them).
/// Once opened it stays open; `started()` tells a test that a task has reached it.
///
/// ```swift
/// let gate = AsyncGate()
/// container.register(Store.self) { await gate.wait(); return LiveStore() }
/// let resolving = Task { try await container.resolveAsync(Store.self) }
/// #expect(await gate.started())   // the factory is waiting now
/// gate.open()
/// ```
final class AsyncGate: @unchecked Sendable {  // Its state: under `lock`.
    private let lock = NSLock()
    private var isOpen = false
    private var hasStarted = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// Tasks in `started()`, by a number that lets the deadline find its own.
    private var watchers: [Int: CheckedContinuation<Bool, Never>] = [:]
    private var nextWatcher = 0
    /// Watchers whose deadline passed before they were stored.
    private var expired: Set<Int> = []

    /// Lets every waiting task through, and every later one at once.
    func open() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isOpen = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Suspends until the gate is open.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (open, watching) = lock.withLock { () -> (Bool, [CheckedContinuation<Bool, Never>]) in
                hasStarted = true
                if !isOpen { waiters.append(continuation) }
                defer { watchers = [:] }
                return (isOpen, Array(watchers.values))
            }
            for watcher in watching { watcher.resume(returning: true) }
            if open { continuation.resume() }
        }
    }

    /// Suspends until a task has called `wait()`, and returns at once when one has; `false` if none did
    /// within `seconds`.
    ///
    /// The deadline counts 10 ms ticks, each of which needs a turn on the cooperative pool, as the task
    /// awaited does: while synchronous tests hold every thread of the pool, neither moves on, so a busy test
    /// run does not expire it before the task it waits for had a chance to start.
    func started(seconds: Double = waitLimit) async -> Bool {
        let number = lock.withLock { () -> Int? in
            if hasStarted { return nil }
            nextWatcher += 1
            return nextWatcher
        }
        guard let number else { return true }
        let deadline = Task { [self] in
            for _ in 0..<Int(seconds * 100) {
                guard (try? await Task.sleep(for: .milliseconds(10))) != nil else { return }  // Cancelled: started.
            }
            expire(number)
        }
        defer { deadline.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let outcome = lock.withLock { () -> Bool? in
                if hasStarted { return true }
                if expired.remove(number) != nil { return false }
                watchers[number] = continuation
                return nil
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    }

    /// Ends the wait of watcher `number`, which saw no task start in time.
    private func expire(_ number: Int) {
        let watcher = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
            guard let watcher = watchers.removeValue(forKey: number) else {
                if !hasStarted { expired.insert(number) }
                return nil
            }
            return watcher
        }
        watcher?.resume(returning: false)
    }
}

extension AsyncGate {
    /// Opens the gate once `seconds` of 10 ms ticks have passed, each needing a turn on the cooperative pool
    /// (see ``started(seconds:)``): a deadline for a wait that only a hang runs out, which a starved pool
    /// does not run out early. Cancel the task it returns when the wait is over.
    func opens(after seconds: Double = waitLimit) -> Task<Void, Never> {
        Task { [self] in
            for _ in 0..<Int(seconds * 100) {
                guard (try? await Task.sleep(nanoseconds: 10_000_000)) != nil else { return }  // Cancelled.
            }
            open()
        }
    }
}

/// Checks `condition` every 10 ms until it holds, without holding a pool thread; `false` if `seconds` of
/// ticks passed first. Ticks, not wall time: each needs a turn on the cooperative pool, as the tasks that
/// make `condition` true do, so while synchronous tests hold every pool thread neither moves on.
@discardableResult
func poll(seconds: Double = waitLimit, until condition: () -> Bool) async -> Bool {
    for _ in 0..<Int(seconds * 100) {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}
