// The only file that knows which platform it runs on: the lock and thread-local storage.
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#else
#error("Injection: no pthreads on this platform; port _Lock before building.")
#endif
import Dispatch
import _InjectionAtomics

/// A mutex with a condition variable, reached only through ``withLock(_:)``.
///
/// `Synchronization.Mutex` needs iOS 18, so this small pthread lock serves every platform we support.
/// Mutex and condition share one heap block, so their addresses never move; the block is aligned to
/// and padded out to whole cache lines, so two threads' locks never share one (false sharing would
/// make per-thread locks contend). Debug builds use an error-checking mutex, and every pthread
/// return code is checked.
final class _Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    private static let cacheLine = 128
    private static let conditionOffset =
        (MemoryLayout<pthread_mutex_t>.size + MemoryLayout<pthread_cond_t>.alignment - 1)
        / MemoryLayout<pthread_cond_t>.alignment * MemoryLayout<pthread_cond_t>.alignment
    private static let blockSize =
        (conditionOffset + MemoryLayout<pthread_cond_t>.size + cacheLine - 1) / cacheLine * cacheLine

    init() {
        let block = UnsafeMutableRawPointer.allocate(byteCount: Self.blockSize, alignment: Self.cacheLine)
        mutex = block.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        condition = (block + Self.conditionOffset).bindMemory(to: pthread_cond_t.self, capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
        pthread_mutexattr_settype(&attributes, .init(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let mutexResult = pthread_mutex_init(mutex, &attributes)
        precondition(mutexResult == 0, "Injection: pthread_mutex_init failed with \(mutexResult)")
        pthread_mutexattr_destroy(&attributes)
        let conditionResult = pthread_cond_init(condition, nil)
        precondition(conditionResult == 0, "Injection: pthread_cond_init failed with \(conditionResult)")
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    /// Runs `body` while holding the lock. `body` must never call user code.
    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let lockResult = pthread_mutex_lock(mutex)
        precondition(lockResult == 0, "Injection: pthread_mutex_lock failed with \(lockResult)")
        defer {
            let unlockResult = pthread_mutex_unlock(mutex)
            precondition(unlockResult == 0, "Injection: pthread_mutex_unlock failed with \(unlockResult)")
        }
        return try body()
    }

    /// Releases the lock until ``broadcast()`` is called, then takes it again. Call only inside `withLock`.
    func wait() {
        let result = pthread_cond_wait(condition, mutex)
        precondition(result == 0, "Injection: pthread_cond_wait failed with \(result)")
    }

    /// Wakes every thread blocked in ``wait()``.
    func broadcast() {
        let result = pthread_cond_broadcast(condition)
        precondition(result == 0, "Injection: pthread_cond_broadcast failed with \(result)")
    }
}

/// One pointer-sized slot per thread, with a destructor that runs when a thread with a value exits.
struct _ThreadLocal: @unchecked Sendable {
    private let key: pthread_key_t

    #if canImport(Darwin)
    typealias Destructor = @convention(c) (UnsafeMutableRawPointer) -> Void
    #else
    typealias Destructor = @convention(c) (UnsafeMutableRawPointer?) -> Void
    #endif

    init(destructor: Destructor) {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, destructor)
        precondition(result == 0, "Injection: pthread_key_create failed with \(result)")
        self.key = key
    }

    /// This thread's value, or `nil` if it has none.
    @inline(__always)
    var value: UnsafeMutableRawPointer? {
        pthread_getspecific(key)
    }

    /// Sets this thread's value.
    func set(_ value: UnsafeMutableRawPointer?) {
        let result = pthread_setspecific(key, value)
        precondition(result == 0, "Injection: pthread_setspecific failed with \(result)")
    }
}

/// Starts detached threads for `verify()`'s workers, without Foundation.
enum _Thread {
    private final class Start {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread.
    static func detach(_ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        let result = pthread_create(&thread, nil, { argument in
            Unmanaged<Start>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, start)
        #else
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue().body()
            return nil
        }, start)
        #endif
        precondition(result == 0, "Injection: pthread_create failed with \(result)")
        #if canImport(Darwin)
        pthread_detach(thread!)
        #else
        pthread_detach(thread)
        #endif
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
