// The library's one door to the OS: every call goes through the C platform layer (`_InjectionPlatform`),
// which declares the same API on every platform, so no Swift file names one.
import _InjectionPlatform

/// A mutex with a condition variable (the C layer's `_injection_lock`): `pthread_mutex_t` and
/// `pthread_cond_t`, error-checking in debug builds.
final class Lock: @unchecked Sendable {  // Self-synchronised.
    private let lock = _injection_lock_create()

    init() {}

    deinit { _injection_lock_destroy(lock) }

    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        _injection_lock_lock(lock)
        defer { _injection_lock_unlock(lock) }
        return try body()
    }

    /// Waits on the condition; call with the lock held.
    func wait() { _injection_lock_wait(lock) }

    /// Wakes every thread waiting on the condition.
    func broadcast() { _injection_lock_broadcast(lock) }
}

/// A value reachable only under its lock, in the shape of swift-nio's `NIOLockedValueBox`: the value is a
/// `ManagedBuffer`'s header, so reading and writing it inside ``withLock(_:)`` pays no run-time
/// exclusivity check, and nothing can reach it outside.
struct LockedState<State>: @unchecked Sendable {  // The state is touched only under the lock.
    private final class Buffer: ManagedBuffer<State, Lock> {
        deinit { _ = withUnsafeMutablePointerToElements { $0.deinitialize(count: 1) } }
    }

    private let buffer: Buffer

    init(_ state: State) {
        buffer = Buffer.create(minimumCapacity: 1) { _ in state } as! Buffer
        buffer.withUnsafeMutablePointerToElements { $0.initialize(to: Lock()) }
    }

    /// Runs `body` on the state, under the lock.
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try buffer.withUnsafeMutablePointers { (state, lock) throws(Failure) -> Result in
            try lock.pointee.withLock { () throws(Failure) -> Result in try body(&state.pointee) }
        }
    }

    /// Waits on the lock's condition; call inside ``withLock(_:)``.
    func wait() { buffer.withUnsafeMutablePointerToElements { $0.pointee.wait() } }

    /// Wakes every thread waiting in ``wait()``.
    func broadcast() { buffer.withUnsafeMutablePointerToElements { $0.pointee.broadcast() } }
}

extension UnsafeMutablePointer where Pointee == UInt64 {
    /// A word for the C layer's atomic loads and stores (`_injection_load_u64`, `_injection_store_u64`).
    static func atomicWord() -> Self {
        let word = allocate(capacity: 1)
        word.initialize(to: 0)
        return word
    }
}
