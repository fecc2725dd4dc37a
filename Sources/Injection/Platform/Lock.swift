// The library's one door to the OS: every call goes through the C platform layer (`_InjectionPlatform`),
// which declares the same API on every platform, so no Swift file names one.
import _InjectionPlatform

/// A value reachable only under its lock, in the shape of swift-nio's `NIOLockedValueBox`: the value is a
/// `ManagedBuffer`'s header, so reading and writing it inside ``withLock(_:)`` pays no run-time
/// exclusivity check, and nothing can reach it outside. The lock is the C layer's `_injection_lock`, the
/// buffer's one element: a `pthread_mutex_t` (error-checking in debug builds) with a condition variable.
struct LockedState<State>: @unchecked Sendable {  // The state is touched only under the lock.
    private final class Buffer: ManagedBuffer<State, OpaquePointer> {
        deinit { withUnsafeMutablePointerToElements { _injection_lock_destroy($0.pointee) } }
    }

    private let buffer: Buffer
    /// The buffer's lock, kept here too: taking it reads no memory of the buffer, which holds the state
    /// (a zero-sized state shares its address with the lock, and ThreadSanitizer took the two for one).
    private let lock: OpaquePointer

    init(_ state: State) {
        buffer = Buffer.create(minimumCapacity: 1) { _ in state } as! Buffer
        lock = _injection_lock_create()
        buffer.withUnsafeMutablePointerToElements { [lock] in $0.initialize(to: lock) }
    }

    /// Runs `body` on the state, under the lock.
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        _injection_lock_lock(lock)
        defer { _injection_lock_unlock(lock) }
        return try buffer.withUnsafeMutablePointerToHeader { (state) throws(Failure) in try body(&state.pointee) }
    }

    /// Blocks until `isDone` holds of the state, waiting on the lock's condition (``broadcast()``) between
    /// checks. Each check reads the state anew, through the buffer: inside ``withLock(_:)``, whose `inout`
    /// promises the state is the closure's alone, the optimizer may keep it in registers across a wait.
    func wait(until isDone: (State) -> Bool) {
        _injection_lock_lock(lock)
        defer { _injection_lock_unlock(lock) }
        buffer.withUnsafeMutablePointerToHeader { state in while !isDone(state.pointee) { _injection_lock_wait(lock) } }
    }

    /// Wakes every thread waiting in ``wait(until:)``.
    func broadcast() { _injection_lock_broadcast(lock) }
}

extension UnsafeMutablePointer where Pointee == UInt64 {
    /// A word for the C layer's atomic loads and stores (`_injection_load_u64`, `_injection_store_u64`).
    static func atomicWord() -> Self {
        let word = allocate(capacity: 1)
        word.initialize(to: 0)
        return word
    }
}
