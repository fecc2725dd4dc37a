import _InjectionPlatform

/// What each thread keeps for itself: the binding of the synchronous scope it is in, the stack of
/// frames of the factories it runs, and its cache of instances.
///
/// ## Binding and frames
/// A synchronous scope (a sync `withContainer`, a factory being run, a `resetCurrentContainer { }`
/// block) cannot hop threads, so it publishes its ``Binding`` here, where the hot path finds it with a
/// thread-local read (`_injection_thread_state`) instead of a task-local lookup. Only the owning
/// thread touches the binding and the frames.
///
/// ## The instance cache
/// Each thread has its own cache, a table per container, and its own lock. The owning thread takes that
/// lock for every lookup (uncontended, so its cache line stays on the thread's core), but for a transient
/// inside a transient's factory, which it finds again in a memo of its own while nothing changed its
/// tables (``pinnedTransient(_:of:)``); a container that
/// changes takes the lock of every thread's cache to evict the keys that changed, under the container's
/// own lock, so no thread reads an instance the container no longer holds. An eviction visits only the
/// keys the change touched, in the tables of that container: its cost does not depend on what else the
/// caches hold.
///
/// Lock order: a container's lock → `registryLock` → a thread's table lock (an eviction); a container's lock
/// → the building thread's own table lock (an insertion); a container's deinit → `registryLock` → a
/// thread's table lock (``forget(_:)``). Evicted objects are handed
/// back to be released after every lock is dropped, since releasing can run a `deinit`.
final class ThreadState: @unchecked Sendable {  // Binding and frames: the owner thread's; the table: under `lock`.
    /// The innermost synchronous scope on this thread; whoever opened it keeps its objects alive.
    @exclusivity(unchecked) var binding: Binding?

    /// Below this address the thread's stack has less than ``stackReserve`` left: a resolve that would
    /// nest deeper fails with ``InjectionError/Kind/tooDeep`` instead of overflowing.
    let stackLimit: UInt

    /// The stack a resolve keeps in hand for one more level of nesting (about 11 KiB in a debug build,
    /// 4 KiB in release), the factory's own frames, and the error path: reporting, or trapping with a message.
    static let stackReserve: UInt = 64 << 10

    private init(caches: Bool = true) {
        self.caches = caches
        var low: UInt = 0, size: UInt = 0
        _injection_thread_stack(&low, &size)
        stackLimit = low + Self.stackReserve
    }

    deinit {
        for entry in tables { entry.table.release() }  // And what it holds.
        frames.deallocate()
        lock.deallocate()
        changes.deallocate()
        memo.deallocate()
    }

    // MARK: - Frames

    /// Room for the frames of nested factories, so pushing one allocates nothing; deeper chains
    /// allocate theirs.
    private static let frameCapacity = 32
    private let frames = UnsafeMutablePointer<Frame>.allocate(capacity: ThreadState.frameCapacity)
    @exclusivity(unchecked) private var frameCount = 0

    /// Pushes `frame` and publishes it as the thread's binding (in `container`, inside the open reset
    /// blocks of `transaction`); returns it and the binding it replaced, for ``pop(_:restoring:)``.
    @inline(__always)
    func push(
        _ frame: Frame, in container: InjectionContainer, transaction: Unmanaged<Transaction>?
    ) -> (UnsafeMutablePointer<Frame>, Binding?) {
        let pointer = frameCount < Self.frameCapacity ? frames + frameCount : .allocate(capacity: 1)
        frameCount += 1
        pointer.initialize(to: frame)
        let outer = binding
        binding = Binding(container: .passUnretained(container), frame: .stack(pointer), transaction: transaction)
        return (pointer, outer)
    }

    /// Pops the innermost frame and restores the binding before it. Returns the resolution of a root
    /// frame: the caller runs its deferred work.
    @inline(__always)
    func pop(_ pointer: UnsafeMutablePointer<Frame>, restoring outer: Binding?) -> Resolution? {
        binding = outer
        let resolution = pointer.pointee.retainedResolution?.takeRetainedValue()  // Only a root has one.
        frameCount -= 1  // `Frame` is trivial: nothing to deinitialize.
        if frameCount >= Self.frameCapacity { pointer.deallocate() }
        return resolution
    }

    /// Runs `body` with `frame` pushed (see ``push(_:in:transaction:)``), then pops it. A root frame
    /// hands its resolution to `resolution`. (Written inline in the slow path instead, a first resolve
    /// retains and releases once more: callgrind, Benchmarks/README.md run 20.)
    func run<Result>(
        _ frame: Frame, in container: InjectionContainer, transaction: Unmanaged<Transaction>?,
        resolution: inout Resolution?, _ body: (FrameRef) -> Result
    ) -> Result {
        let (pointer, outer) = push(frame, in: container, transaction: transaction)
        defer { resolution = pop(pointer, restoring: outer) }
        return body(.stack(pointer))
    }

    // MARK: - Resolutions

    /// A finished resolution that nothing else references, kept for this thread's next one, so that an
    /// uncontended first resolve allocates nothing but its instance (and its box, unless ``spareBox``
    /// serves).
    @exclusivity(unchecked) private var spareResolution: Resolution?

    /// A box a resolve emptied of its small value, for this thread's next build to fill: a first resolve
    /// then allocates nothing but its instance. Owner thread only.
    @exclusivity(unchecked) var spareBox: Box?

    /// A resolution for a root frame that claims a build: the spare one if there is one.
    func makeResolution() -> Resolution {
        guard let spare = spareResolution else { return Resolution() }
        spareResolution = nil
        return spare
    }

    /// Keeps `resolution`, whose root's factory returned, as the spare, if nothing else references it (no
    /// build, waiter or copied frame can tell it from a new one then) and it holds no work. If something
    /// else does (a task started inside it holds a copy of its frames), marks it ended for them instead.
    /// (`inout`, not `consuming`: a consumed parameter's binding is a second reference in a debug build.)
    @inline(__always)
    func recycle(_ resolution: inout Resolution?) {
        guard resolution != nil else { return }
        if isKnownUniquelyReferenced(&resolution) {
            if spareResolution == nil, resolution.unsafelyUnwrapped.isIdle { spareResolution = resolution.take() }
        } else {
            resolution.unsafelyUnwrapped.end()
        }
    }

    /// Whether this thread keeps a finished resolution for its next one (a test probe).
    var hasSpareResolution: Bool { spareResolution != nil }

    /// Runs `body` with `binding` as the thread's binding, then restores the one before.
    @inline(__always)
    func bind<Result, Failure: Error>(_ binding: Binding, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let outer = self.binding
        self.binding = binding
        defer { self.binding = outer }
        return try body()
    }

    // MARK: - This thread's state

    /// Releases a thread's state when the thread exits (called by the C platform layer once the thread
    /// can no longer read it).
    private static let release: _injection_thread_state_destructor = { pointer in
        let state = Unmanaged<ThreadState>.fromOpaque(pointer).takeRetainedValue()
        registryLock.withLock { registry[ObjectIdentifier(state)] = nil }
        _ = state  // Released outside the lock; its entries with it.
    }

    /// This thread's state, unretained (the thread keeps it alive until it exits), or `nil` if none.
    @inline(__always)
    static var current: Unmanaged<ThreadState>? {
        guard let pointer = _injection_thread_state() else { return nil }
        return Unmanaged<ThreadState>.fromOpaque(pointer)
    }

    /// The current thread's state, made on first use; `nil` on a thread that is exiting and whose
    /// state was already released (from a pthread key destructor that runs after the library's): a new
    /// state there would never be released. See ``withCurrent(_:)``.
    static var currentOrNew: ThreadState? {
        if let pointer = _injection_thread_state() { return Unmanaged<ThreadState>.fromOpaque(pointer).takeUnretainedValue() }
        let state = ThreadState()
        let pointer = Unmanaged.passRetained(state).toOpaque()
        guard _injection_thread_state_adopt(pointer, release) else {
            Unmanaged<ThreadState>.fromOpaque(pointer).release()
            return nil
        }
        registryLock.withLock { registry[ObjectIdentifier(state)] = state }
        return state
    }

    /// Runs `body` with this thread's state. On a thread that is exiting, whose own state was released,
    /// `body` gets a state lent for this call only: it caches nothing, so no container ever has to
    /// evict from it, and it is released when `body` returns.
    @inline(__always)
    static func withCurrent<Result, Failure: Error>(_ body: (ThreadState) throws(Failure) -> Result) throws(Failure) -> Result {
        if let state = currentOrNew { return try body(state) }
        let lent = ThreadState(caches: false)
        _injection_thread_state_lend(Unmanaged.passUnretained(lent).toOpaque())
        defer { _injection_thread_state_lend(nil) }
        return try withExtendedLifetime(lent) { () throws(Failure) -> Result in try body(lent) }
    }

    /// How many live threads' caches hold an entry for `key` of `container` (a test probe).
    static func threadsCaching(_ key: AnyType, of container: ObjectIdentifier) -> Int {
        registryLock.withLock {
            registry.values.reduce(0) { count, state in
                count + state.lock.withLock { state.tableIndex(of: container).flatMap { state.tables[$0].table._withUnsafeGuaranteedRef { $0.find(key.bits) } } == nil ? 0 : 1 }
            }
        }
    }

    /// Number of live thread states (a test probe).
    static var registeredCount: Int { registryLock.withLock { registry.count } }

    // MARK: - Every thread's cache

    private static let registryLock = Lock()
    @exclusivity(unchecked) nonisolated(unsafe) private static var registry: [ObjectIdentifier: ThreadState] = [:]

    /// Removes `keys` of `container` from every thread's cache, adding what they held to `evicted`, to
    /// release once all locks are dropped. Call under the container's lock. Costs a lookup per key per
    /// thread that holds entries of `container`, whatever else the caches hold.
    static func evict(_ keys: [AnyType], of container: ObjectIdentifier, into evicted: inout [AnyObject]) {
        guard !keys.isEmpty else { return }
        forEachTable(of: container) { state, index in
            state.tables[index].table._withUnsafeGuaranteedRef { table in
                for key in keys {
                    if let removed = table.remove(key.bits), let released = state.retire(removed) { evicted.append(released) }
                }
            }
        }
    }

    /// Drops every thread's table of `container`, which is being deinitialized (a new container may reuse
    /// its address), adding what they held to `evicted`, to release once all locks are dropped.
    static func forget(_ container: ObjectIdentifier, into evicted: inout [AnyObject]) {
        forEachTable(of: container) { state, index in
            let table = state.tables.remove(at: index).table
            table._withUnsafeGuaranteedRef { $0.takeAll { if let released = state.retire($0) { evicted.append(released) } } }
            table.release()  // Emptied: it releases nothing more.
        }
    }

    /// Calls `body` with each caching thread that has a table of `container`, and that table's index,
    /// under the registry's lock and that thread's cache lock, the thread's change count bumped.
    @inline(__always)
    private static func forEachTable(of container: ObjectIdentifier, _ body: (ThreadState, Int) -> Void) {
        registryLock.withLock {
            for state in registry.values where state.caches {
                state.lock.withLock {
                    guard let index = state.tableIndex(of: container) else { return }
                    state.noteChange()
                    body(state, index)
                }
            }
        }
    }

    // MARK: - Lookup and insertion

    /// What a lookup found: this thread's entry for a key, valid until ``endLookup()``.
    enum Hit {
        /// A cached instance: copy it out of its registration (``Registration/instance(as:)``) before
        /// ``endLookup()``.
        case instance(Unmanaged<Registration>)
        /// A transient's registration, used unretained while the cache is pinned (``pinLocked()``).
        case factory(Unmanaged<Registration>)
    }

    private let lock = WordLock(padded: true)
    /// The cache: one table per container this thread holds entries of (usually one or two), kept until
    /// the container is deinitialized, keyed by the key's bits, each value a retained registration, tagged
    /// (``ObjectTable/tag``) for a transient's (else its cached instance is what is looked up). Under `lock`.
    @exclusivity(unchecked) private var tables: [(container: UInt, table: Unmanaged<ObjectTable>)] = []
    /// Whether ``insert(_:isFactory:in:)`` caches anything: false for a state lent to an exiting thread.
    private let caches: Bool

    /// The index of `container`'s table in ``tables``. Under `lock`.
    ///
    /// A table found further down moves to the front, so the containers in use are found first however
    /// many others this thread keeps tables of (each test's container, say).
    @inline(__always)
    private func tableIndex(of container: ObjectIdentifier) -> Int? {
        let address = UInt(bitPattern: container)
        if let first = tables.first, first.container == address { return 0 }
        return tableIndexMovingToFront(address)
    }

    @inline(never)
    private func tableIndexMovingToFront(_ address: UInt) -> Int? {
        guard let index = tables.firstIndex(where: { $0.container == address }) else { return nil }
        tables.swapAt(0, index)
        return 0
    }

    /// Counts the changes to this thread's tables: bumped, under `lock`, by every eviction and every
    /// forgotten container (other threads) and every insertion (this one). The owner reads it without the
    /// lock (``pinnedTransient(_:of:)``) to know whether what it found in its table is still there.
    private let changes = UnsafeMutablePointer<UInt64>.atomicWord()

    /// Counts a change to the tables. Under `lock`.
    @inline(__always)
    private func noteChange() { _injection_store_u64(changes, _injection_load_u64(changes) &+ 1) }

    /// The transients this thread last found in its table, each with the count of ``changes`` then, so
    /// that a nested resolve inside a transient's factory finds its own transient without the table's lock
    /// (two atomic read-modify-writes each): owner thread only, direct-mapped by key.
    private struct Memo {
        var container: UInt = 0
        var key: UInt = 0
        var registration: UnsafeRawPointer?
        var changes: UInt64 = 0
    }

    private static let memoCapacity = 8  // ``memoIndex(_:)`` takes the 3 bits that index it.
    private let memo: UnsafeMutablePointer<Memo> = {
        let memo = UnsafeMutablePointer<Memo>.allocate(capacity: ThreadState.memoCapacity)
        memo.initialize(repeating: Memo(), count: ThreadState.memoCapacity)
        return memo
    }()

    @inline(__always)
    private static func memoIndex(_ key: AnyType) -> Int {
        // Fibonacci hashing: the product's top 3 bits, log2(memoCapacity).
        Int(truncatingIfNeeded: (UInt64(truncatingIfNeeded: key.bits) &* 0x9E37_79B9_7F4A_7C15) &>> 61)
    }

    /// The transient registration for `key` of `container` this thread found in its table, if the cache
    /// is pinned and nothing changed the tables since: with no lock. Owner thread only.
    ///
    /// Sound because a registration leaves a table only by a change, which counts itself under the table's
    /// lock before the lock is released, so a count read as unchanged means the entry is still there (or
    /// was removed by a change nothing orders before this resolve); and while the cache is pinned no
    /// registration that leaves it is released, so the one returned outlives the factory run.
    @inline(__always)
    func pinnedTransient(_ key: AnyType, of container: ObjectIdentifier) -> Unmanaged<Registration>? {
        guard isPinned else { return nil }
        let entry = memo[Self.memoIndex(key)]
        guard entry.key == key.bits, entry.container == UInt(bitPattern: container), let registration = entry.registration,
              entry.changes == _injection_load_u64(changes) else { return nil }
        return Unmanaged.fromOpaque(registration)
    }

    /// Remembers the transient `registration` found for `key` of `container` (see
    /// ``pinnedTransient(_:of:)``). Between ``beginLookup(container:key:)`` and ``endLookup()``.
    @inline(__always)
    func remember(_ registration: Unmanaged<Registration>, for key: AnyType, of container: ObjectIdentifier) {
        memo[Self.memoIndex(key)] = Memo(
            container: UInt(bitPattern: container), key: key.bits, registration: UnsafeRawPointer(registration.toOpaque()),
            changes: _injection_load_u64(changes))
    }

    /// Takes this thread's table lock and returns its entry for `key` of `container`, if any. The entry
    /// stays valid until ``endLookup()``, which must follow: copy what is needed before.
    ///
    /// Copying the value under the lock needs no reference count on the registration (only the instance's own),
    /// and unspecialized callers copy it without generic metadata.
    @inline(__always)
    func beginLookup(container: ObjectIdentifier, key: AnyType) -> Hit? {
        lock.lock()
        guard let index = tableIndex(of: container) else { return nil }
        return tables[index].table._withUnsafeGuaranteedRef { table -> Hit? in
            guard let found = table.find(key.bits) else { return nil }
            let tagged = table.value(at: found)
            let registration = ObjectTable.object(tagged, as: Registration.self)
            return tagged & ObjectTable.tag != 0 ? .factory(registration) : .instance(registration)
        }
    }

    /// Ends a ``beginLookup(container:key:)``.
    @inline(__always)
    func endLookup() { lock.unlock() }

    /// Caches `registration` for `key` of `container`: its cached instance, or a transient's factory
    /// (`isFactory`). Call under the container's lock; release what it returns (a replaced entry) after unlocking.
    func insert(_ registration: Registration, isFactory: Bool, in container: ObjectIdentifier) -> AnyObject? {
        guard caches else { return nil }
        let tagged = UInt(bitPattern: Unmanaged.passRetained(registration).toOpaque()) | (isFactory ? ObjectTable.tag : 0)
        return lock.withLock { () -> AnyObject? in
            noteChange()
            let index = tableIndex(of: container) ?? {
                tables.append((UInt(bitPattern: container), .passRetained(.make(capacity: 16))))
                return tables.count - 1
            }()
            let table = tables[index].table
            if table._withUnsafeGuaranteedRef({ $0.isFull(adding: 1) }) {
                tables[index].table = .passRetained(table._withUnsafeGuaranteedRef { $0.copy(capacity: $0.bucketCount * 2, moving: true) })
                table.release()  // Emptied by the move.
            }
            return tables[index].table._withUnsafeGuaranteedRef { $0.insert(registration.type.bits, tagged) }.flatMap(retire)
        }
    }

    // MARK: - Pinning the registrations of running transients

    /// Whether this thread runs a transient's factory found in its cache: until ``unpin()``, no
    /// registration in the cache is released, so the running factories' registrations are used
    /// without retaining them. Under `lock`.
    @exclusivity(unchecked) private var isPinned = false
    /// Registrations evicted from this cache while it was pinned, released by ``unpin()``. Under `lock`.
    @exclusivity(unchecked) private var pinnedEvictions: [AnyObject] = []

    /// Pins the cache unless it is pinned already; returns whether this call pinned it (and must
    /// ``unpin()``). Call between ``beginLookup(container:key:)`` and ``endLookup()``.
    @inline(__always)
    func pinLocked() -> Bool {
        if isPinned { return false }
        isPinned = true
        return true
    }

    /// Ends the pin; returns the registrations evicted meanwhile, to release outside the lock.
    func unpin() -> [AnyObject] {
        lock.withLock {
            isPinned = false
            defer { pinnedEvictions = [] }
            return pinnedEvictions
        }
    }

    /// Where an entry's object (retained, tagged) goes once out of the table, under `lock`: back to the
    /// caller, to release once unlocked, or, for a registration while pinned, to ``pinnedEvictions`` (then `nil`).
    private func retire(_ tagged: UInt) -> AnyObject? {
        let object = ObjectTable.object(tagged).takeRetainedValue()
        guard tagged & ObjectTable.tag != 0 && isPinned else { return object }
        pinnedEvictions.append(object)
        return nil
    }
}
