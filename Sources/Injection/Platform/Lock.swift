// The library's one door to the OS: every call goes through the C platform layer (`_InjectionPlatform`),
// which declares the same API on every platform, so no Swift file names one.
import _InjectionPlatform

/// A mutex with a condition variable: the C platform layer's `_injection_lock` (`InjectionLock.h`).
///
/// `Synchronization.Mutex` needs iOS 18. This one is a heap block with a fixed address, an
/// error-checking mutex in debug builds, and every OS return code checked (destroy included).
final class Lock: @unchecked Sendable {  // Self-synchronised.
    private let lock = _injection_lock_create()

    init() {}

    deinit { _injection_lock_destroy(lock) }

    /// Runs `body` while holding the lock. `body` must never call user code.
    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        _injection_lock_lock(lock)
        defer { _injection_lock_unlock(lock) }
        return try body()
    }

    /// Releases the lock until ``broadcast()``, then takes it again. Call only inside `withLock`.
    func wait() { _injection_lock_wait(lock) }

    /// Wakes every thread blocked in ``wait()``.
    func broadcast() { _injection_lock_broadcast(lock) }
}

/// A value reachable only through its lock, as NIO's `NIOLockedValueBox`: nothing reads or writes
/// `State` without holding the lock, and no "guarded by" comment is needed.
final class LockedState<State>: @unchecked Sendable {  // `state` is touched only under `lock`.
    private let lock = Lock()
    @exclusivity(unchecked) private var state: State

    init(_ state: State) { self.state = state }

    /// Runs `body` with the state while holding the lock. `body` must never call user code.
    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock { () throws(Failure) -> Result in try body(&state) }
    }

    /// Releases the lock until ``broadcast()``, then takes it again. Call only inside `withLock`.
    func wait() { lock.wait() }

    /// Wakes every thread blocked in ``wait()``.
    func broadcast() { lock.broadcast() }
}

/// A one-word lock for short critical sections that never wait: `os_unfair_lock` on Apple platforms;
/// on Linux one compare-and-swap to take and one exchange to release when uncontended, and otherwise a
/// short spin, then a kernel wait (`InjectionCacheLock.h`).
///
/// Each thread's cache has one, taken by that thread on every cache hit: its word sits alone on its
/// cache line, so two threads' locks never share one.
struct WordLock: @unchecked Sendable {  // Self-synchronised.
    private let word: UnsafeMutablePointer<UInt32>

    /// A lock whose word has a cache line of its own (`padded`), or just a word.
    init(padded: Bool) {
        let size = padded ? 128 : MemoryLayout<UInt32>.size
        word = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: padded ? 128 : 4).bindMemory(to: UInt32.self, capacity: 1)
        word.initialize(to: 0)
    }

    /// Frees the lock; call once, when nothing can take it any more.
    func deallocate() { UnsafeMutableRawPointer(word).deallocate() }

    /// Takes the lock; pair with ``unlock()``.
    @inline(__always)
    func lock() { _injection_cache_lock(word) }

    /// Releases the lock taken with ``lock()``.
    @inline(__always)
    func unlock() { _injection_cache_unlock(word) }

    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        _injection_cache_lock(word)
        defer { _injection_cache_unlock(word) }
        return try body()
    }
}

extension UnsafeMutablePointer where Pointee == UInt64 {
    /// A zeroed word of its own, for the C layer's atomic loads and stores (`_injection_load_u64`): a
    /// stored property has no address that two threads may use without the runtime's exclusivity checks.
    static func atomicWord() -> Self {
        let word = allocate(capacity: 1)
        word.initialize(to: 0)
        return word
    }
}
