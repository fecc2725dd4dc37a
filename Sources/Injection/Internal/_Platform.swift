// The library's one door to the OS: every call goes through the C platform layer (`_InjectionPlatform`),
// which declares the same API on every platform, so this Swift names none.
import Dispatch
import _InjectionPlatform

/// A mutex with a condition variable, reached only through ``withLock(_:)``.
///
/// `Synchronization.Mutex` needs iOS 18, so this lock from the C platform layer (`InjectionLock.h`)
/// serves every platform we support: one heap block with a fixed address, padded to whole cache lines,
/// an error-checking mutex in debug builds, and every OS return code checked.
final class _Lock: @unchecked Sendable {
    private let lock = _injection_lock_create()

    init() {}

    deinit {
        _injection_lock_destroy(lock)
    }

    /// Runs `body` while holding the lock. `body` must never call user code.
    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        _injection_lock_lock(lock)
        defer { _injection_lock_unlock(lock) }
        return try body()
    }

    /// Releases the lock until ``broadcast()`` is called, then takes it again. Call only inside `withLock`.
    func wait() {
        _injection_lock_wait(lock)
    }

    /// Wakes every thread blocked in ``wait()``.
    func broadcast() {
        _injection_lock_broadcast(lock)
    }
}

/// Starts detached threads for `verify()`'s workers, with a stack of a known size.
enum _Thread {
    /// The stack of every thread the library starts: 8 MiB, Linux's default for the main thread. Apple
    /// platforms give secondary threads 512 KiB, which a debug build's resolution of a deep graph
    /// (about 11 KiB per level) outgrows at about 45 levels.
    static let stackSize = 8 << 20

    private final class Start {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread with a stack of ``stackSize`` bytes.
    static func detach(_ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        _injection_thread_start({ context in
            Unmanaged<Start>.fromOpaque(context!).takeRetainedValue().body()
        }, start, stackSize)
    }

    /// Blocks the calling thread for good.
    static func park() -> Never {
        let lock = _Lock()
        lock.withLock { () -> Void in
            while true { lock.wait() }
        }
        fatalError("Injection: a parked thread woke up")
    }
}

/// Whether the running code is isolated to the main actor, without the crash of `assumeIsolated`.
enum _MainActorCheck {
    private static let key = DispatchSpecificKey<Bool>()
    private static let isInstalled: Bool = {
        DispatchQueue.main.setSpecific(key: key, value: true)
        return true
    }()

    /// The caller's static isolation (`#isolation`) when the compiler knows it; otherwise whether this
    /// runs on the main thread or on the main dispatch queue, which is the main actor's executor
    /// (under some test runners a thread other than the main one drains it).
    static func isMainActor(_ caller: (any Actor)?) -> Bool {
        if let caller { return (caller as AnyObject) === MainActor.shared }
        _ = isInstalled
        return _injection_is_main_thread() || DispatchQueue.getSpecific(key: key) == true
    }
}
