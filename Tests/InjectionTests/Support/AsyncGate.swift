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

    /// Suspends until a task has called `wait()`; `false` if none did within `seconds`.
    func started(seconds: Double = 10) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let number = lock.withLock { () -> Int? in
                if hasStarted { return nil }
                nextWatcher += 1
                watchers[nextWatcher] = continuation
                return nextWatcher
            }
            guard let number else { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                lock.withLock { watchers.removeValue(forKey: number) }?.resume(returning: false)
            }
        }
    }
}
