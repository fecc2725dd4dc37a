import _InjectionPlatform

/// What each thread keeps for itself: the binding of the synchronous scope it is in, the stack of
/// frames of the factories it runs, where its stack ends, and its ``ThreadCache``.
///
/// A synchronous scope (a sync `withContainer`, a factory being run, a `resetCurrentContainer { }`
/// block) cannot hop threads, so it publishes its ``Binding`` here, where a resolve finds it with a
/// thread-local read instead of a task-local lookup. Only the owning thread touches the binding. The
/// C platform layer keeps the state's address in a thread-local and releases it when the thread exits;
/// ``current`` and ``currentOrNew`` are the one place that hands it across.
///
/// The fields are the header of a `ManagedBuffer`: read on every resolve, with no run-time exclusivity check.
final class ThreadState: ManagedBuffer<ThreadState.Fields, Void> {
    typealias Fields = (
        binding: Binding?, stackLimit: UInt, cache: Unmanaged<ThreadCache>?,
        frames: UnsafeMutablePointer<StackFrame>, frameCount: Int
    )

    /// The stack a resolve keeps in hand for one more level of nesting, the factory's own frames, and
    /// the error path: reporting, or trapping with a message.
    static let stackReserve: UInt = 64 << 10

    /// A state for this thread; `caches`: whether it has a cache (not for a thread that is exiting).
    private static func make(caches: Bool) -> ThreadState {
        var low: UInt = 0, size: UInt = 0
        _injection_thread_stack(&low, &size)
        let cache: Unmanaged<ThreadCache>? = caches ? .passRetained(.make()) : nil
        let fields: Fields = (nil, low + stackReserve, cache, .allocate(capacity: frameCapacity), 0)
        return create(minimumCapacity: 0) { _ in fields } as! ThreadState
    }

    /// The innermost synchronous scope on this thread; whoever opened it keeps its objects alive.
    var binding: Binding? { withUnsafeMutablePointerToHeader { $0.pointee.binding } }

    /// Below this address the thread's stack has less than ``stackReserve`` left: a resolve that would
    /// nest deeper fails with ``InjectionError/Kind/tooDeep`` instead of overflowing.
    var stackLimit: UInt { withUnsafeMutablePointerToHeader { $0.pointee.stackLimit } }

    /// This thread's cache; `nil` on a state lent to an exiting thread, which caches nothing. Not
    /// retained for the caller: the state holds it (a resolve reads it without a reference count).
    var cache: Unmanaged<ThreadCache>? { withUnsafeMutablePointerToHeader { $0.pointee.cache } }

    deinit {
        cache?.release()
        withUnsafeMutablePointerToHeader { $0.pointee.frames.deallocate() }
    }

    // MARK: - Frames

    /// Room for the frames of nested factories, so pushing one allocates nothing; deeper chains allocate
    /// theirs.
    private static let frameCapacity = 32

    /// Pushes `frame` on this thread's frame stack, the root of `resolution` if given; returns where it
    /// is, valid until ``pop(_:)``.
    func push(_ frame: Frame, resolution: Resolution? = nil) -> UnsafeMutablePointer<StackFrame> {
        let pointer = withUnsafeMutablePointerToHeader { fields in
            let count = fields.pointee.frameCount
            fields.pointee.frameCount = count + 1
            return count < Self.frameCapacity ? fields.pointee.frames + count : .allocate(capacity: 1)
        }
        pointer.initialize(to: (frame, resolution, nil))
        return pointer
    }

    /// Pops the innermost frame, at `pointer`; returns its resolution if it is that resolution's root
    /// (the caller closes it).
    func pop(_ pointer: UnsafeMutablePointer<StackFrame>) -> Resolution? {
        let (frame, resolution, _) = pointer.move()
        withUnsafeMutablePointerToHeader { fields in
            fields.pointee.frameCount -= 1
            if fields.pointee.frameCount >= Self.frameCapacity { pointer.deallocate() }
        }
        return frame.isRoot ? resolution : nil
    }

    /// Runs `body` with `binding` as the thread's binding, then restores the one before. (Swapped in and
    /// out, not copied: the transient graph target, ≤ 3.5x, needs the copies saved.)
    @inline(__always)  // The transient graph target (≤ 3.5x) fails without it.
    func bind<Result, Failure: Error>(_ binding: Binding?, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        var other = binding
        withUnsafeMutablePointerToHeader { swap(&$0.pointee.binding, &other) }
        defer { withUnsafeMutablePointerToHeader { swap(&$0.pointee.binding, &other) } }
        return try body()
    }

    // MARK: - This thread's state

    /// This thread's state, not retained (the thread keeps it alive until it exits), or `nil` if none.
    static var current: Unmanaged<ThreadState>? {
        _injection_thread_state().map { Unmanaged<ThreadState>.fromOpaque($0) }
    }

    /// Releases a thread's state when the thread exits (called by the C platform layer once the thread
    /// can no longer read it).
    private static let release: _injection_thread_state_destructor = { pointer in
        let state = Unmanaged<ThreadState>.fromOpaque(pointer).takeRetainedValue()
        state.cache?.takeUnretainedValue().unregister()
        _ = state  // Released outside the registry's lock; its entries with it.
    }

    /// The current thread's state, made on first use; `nil` on a thread that is exiting and whose
    /// state was already released (from a pthread key destructor that runs after the library's): a new
    /// state there would never be released. See ``withCurrent(_:)``.
    static var currentOrNew: ThreadState? {
        if let current { return current.takeUnretainedValue() }
        let state = make(caches: true)
        guard _injection_thread_state_adopt(Unmanaged.passRetained(state).toOpaque(), release) else {
            Unmanaged.passUnretained(state).release()  // The reference passed to the C layer, which refused it.
            return nil
        }
        state.cache?.takeUnretainedValue().register()
        return state
    }

    /// Runs `body` with this thread's state. On a thread that is exiting, whose own state was released,
    /// `body` gets a state lent for this call only: it caches nothing, so no container ever has to
    /// evict from it, and it is released when `body` returns.
    static func withCurrent<Result, Failure: Error>(_ body: (ThreadState) throws(Failure) -> Result) throws(Failure) -> Result {
        if let state = currentOrNew { return try body(state) }
        let lent = make(caches: false)
        _injection_thread_state_lend(Unmanaged.passUnretained(lent).toOpaque())
        defer { _injection_thread_state_lend(nil) }
        return try withExtendedLifetime(lent) { () throws(Failure) -> Result in try body(lent) }
    }
}
