// The library's one door to the OS: every call goes through the C platform layer (`_InjectionPlatform`),
// which declares the same API on every platform, so no Swift file names one.
import _InjectionPlatform

/// A value reachable only under its lock, in the shape of swift-nio's `NIOLockedValueBox`: the lock word
/// is a `ManagedBuffer`'s header and the value its one element, in one allocation whose address never
/// moves, so nothing can reach the value outside ``withLock(_:)``, and reading it there pays no run-time
/// exclusivity check. The lock is the C layer's one-word lock (`InjectionLock.h`), taken inline when
/// uncontended.
package struct LockedState<State>: @unchecked Sendable {  // The state is touched only under the lock.
    private final class Buffer: ManagedBuffer<UInt32, State> {
        deinit { _ = withUnsafeMutablePointerToElements { $0.deinitialize(count: 1) } }
    }

    private let buffer: Buffer

    init(_ state: State) {
        buffer = Buffer.create(minimumCapacity: 1) { _ in 0 } as! Buffer
        buffer.withUnsafeMutablePointerToElements { $0.initialize(to: state) }
    }

    /// Runs `body` on the state, under the lock. `body` must not run user code: a factory, a `deinit` of
    /// something released inside, a handler.
    package func withLock<Result, Failure>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try buffer.withUnsafeMutablePointers { (word, state) throws(Failure) -> Result in
            _injection_lock(word)
            #if DEBUG
            _injection_locks_held_add(1)
            #endif
            defer {
                #if DEBUG
                _injection_locks_held_add(-1)
                #endif
                _injection_unlock(word)
            }
            return try body(&state.pointee)
        }
    }
}
