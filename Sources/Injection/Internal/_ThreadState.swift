import _InjectionPlatform

/// What each thread keeps for itself: the context of the synchronous scope it is in, and a copy of
/// cached instances, so a cache hit never touches a lock or a reference count other threads use.
///
/// ## The synchronous context
/// A synchronous scope (a sync `withContainer`, a factory being run, a `resetCurrentContainer { }`
/// block) cannot hop threads, so besides the task-local it publishes its context here, where the hot
/// path reads it with one thread-local read (`_injection_thread_state`) instead of a (much slower)
/// task-local lookup. Only the owning thread reads or writes it; the same goes for the stack of `_Link`s.
///
/// ## The instance cache
/// Each thread has its own cache and its own lock. The owning thread takes that lock for every lookup
/// (uncontended, so its cache line stays on the thread's core); a container that changes (register,
/// unregister, reset, deinit) takes the lock of every thread's cache to evict its entries, under the
/// container's own lock, so no thread can read an instance the container no longer holds.
/// Each thread boxes its own copy of the instance, and copies it out under the lock, so even the box's
/// reference count is untouched. Transients' registrations are used unretained under a pin (see
/// ``pinLocked()``).
///
/// Lock order: container → `registryLock` → a thread's `lock`. Evicted boxes are handed back to the
/// caller to be released after every lock is dropped, since releasing can run a `deinit`.
final class _ThreadState: @unchecked Sendable {
    private struct Entry {
        var container: UInt
        var key: UInt
        /// This thread's retained copy of the instance (a `_Box`), or the registration of a transient
        /// (an `_AnyRegistration`); `nil` for an empty bucket.
        var box: Unmanaged<AnyObject>?
        var isFactory: Bool
    }

    /// The innermost synchronous scope on this thread (the scope keeps its objects alive).
    /// Owner thread only.
    @exclusivity(unchecked) var scope: _Scope?

    /// Whether this thread is one of `verify()`'s workers. Owner thread only.
    var isVerificationWorker = false

    private let lock = _CacheLock()
    // Open addressing with linear probing; guarded by `lock`.
    @exclusivity(unchecked) private var entries: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var count = 0

    /// Whether ``insert(container:key:_:)`` caches anything: false for a state lent to an exiting thread.
    private let caches: Bool

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
        capacity = 16
        entries = .allocate(capacity: capacity)
        entries.initialize(repeating: Entry(container: 0, key: 0, box: nil, isFactory: false), count: capacity)
    }

    deinit {
        for index in 0..<capacity { entries[index].box?.release() }
        entries.deallocate()
        links.deallocate()
        lock.deallocate()
    }

    // MARK: - Links of transients being built

    /// Room for the `_Link`s of nested transient factories running on this thread, so pushing one
    /// allocates nothing; deeper chains allocate their links. Owner thread only.
    private static let linkCapacity = 32
    private let links = UnsafeMutablePointer<_Link>.allocate(capacity: _ThreadState.linkCapacity)
    @exclusivity(unchecked) private var linkCount = 0

    /// Pushes `link`, makes it the thread's scope (in `container`, inside the open reset blocks of
    /// `transaction`), and returns it with the scope it replaced, for ``popLink(_:restoring:)``.
    @inline(__always)
    func pushLink(
        _ link: _Link, in container: InjectionContainer, transaction: _Transaction?
    ) -> (UnsafeMutablePointer<_Link>, _Scope?) {
        let pointer: UnsafeMutablePointer<_Link>
        if linkCount < Self.linkCapacity {
            pointer = links + linkCount
        } else {
            pointer = .allocate(capacity: 1)
        }
        linkCount += 1
        pointer.initialize(to: link)
        let outer = scope
        scope = _Scope(container: container, link: pointer, transaction: transaction)
        return (pointer, outer)
    }

    /// Pops the innermost link (releasing its frame, if one was made) and restores the scope before it.
    @inline(__always)
    func popLink(_ pointer: UnsafeMutablePointer<_Link>, restoring outer: _Scope?) {
        scope = outer
        pointer.pointee.frame?.release()  // `_Link` is otherwise trivial: nothing to deinitialize.
        linkCount -= 1
        if linkCount >= Self.linkCapacity { pointer.deallocate() }
    }

    // MARK: - This thread's cache

    /// Releases a thread's state when the thread exits (called by the C platform layer once the thread
    /// can no longer read it).
    private static let release: _injection_thread_state_destructor = { pointer in
        let state = Unmanaged<_ThreadState>.fromOpaque(pointer).takeRetainedValue()
        registryLock.withLock { registry[ObjectIdentifier(state)] = nil }
        _ = state  // Released outside the lock; its boxes with it.
    }

    /// This thread's state, unretained (the thread keeps it alive until it exits), or `nil` if none.
    @inline(__always)
    static var current: Unmanaged<_ThreadState>? {
        guard let pointer = _injection_thread_state() else { return nil }
        return Unmanaged<_ThreadState>.fromOpaque(pointer)
    }

    /// The current thread's state, created on first use; `nil` on a thread that is exiting and whose
    /// state was already released (from a pthread key destructor that runs after the library's): a new
    /// state there would never be released. See ``withCurrent(_:)``.
    static var currentOrNew: _ThreadState? {
        if let pointer = _injection_thread_state() { return Unmanaged<_ThreadState>.fromOpaque(pointer).takeUnretainedValue() }
        let state = _ThreadState()
        let pointer = Unmanaged.passRetained(state).toOpaque()
        guard _injection_thread_state_adopt(pointer, release) else {
            Unmanaged<_ThreadState>.fromOpaque(pointer).release()
            return nil
        }
        registryLock.withLock { registry[ObjectIdentifier(state)] = state }
        return state
    }

    /// Runs `body` with this thread's state. On a thread that is exiting, whose own state was released,
    /// `body` gets a state lent for this call only: it caches nothing, so no container ever has to
    /// evict from it, and it is released when `body` returns.
    @inline(__always)
    static func withCurrent<Result, Failure: Error>(_ body: (_ThreadState) throws(Failure) -> Result) throws(Failure) -> Result {
        if let state = currentOrNew { return try body(state) }
        let lent = _ThreadState(caches: false)
        _injection_thread_state_lend(Unmanaged.passUnretained(lent).toOpaque())
        defer { _injection_thread_state_lend(nil) }
        return try withExtendedLifetime(lent) { () throws(Failure) -> Result in try body(lent) }
    }

    /// Number of live thread states that a container's eviction visits (a test probe).
    static var registeredCount: Int { registryLock.withLock { registry.count } }

    // MARK: - Every thread's cache

    private static let registryLock = _Lock()
    nonisolated(unsafe) private static var registry: [ObjectIdentifier: _ThreadState] = [:]

    /// Removes every entry of `container` from every thread's cache; returns the boxes to release
    /// once all locks are dropped.
    static func evict(container: ObjectIdentifier) -> [AnyObject] {
        let containerBits = UInt(bitPattern: container)
        return registryLock.withLock {
            var evicted: [AnyObject] = []
            for cache in registry.values {
                cache.lock.withLock { cache.removeAll(of: containerBits, into: &evicted) }
            }
            return evicted
        }
    }

    // MARK: - Lookup and insertion

    /// Takes this thread's cache lock and returns its entry for `key` of `container`: this thread's
    /// own copy of a cached instance (a `_Box`), or the registration of a transient. The entry stays
    /// valid until ``endLookup()``, which must follow: copy what is needed before.
    ///
    /// Copying the value under the lock needs no reference count on the box (only the instance's own),
    /// and unspecialized callers copy it without generic metadata or closures over their type.
    @inline(__always)
    func beginLookup(container: ObjectIdentifier, key: _TypeID) -> (object: Unmanaged<AnyObject>, isFactory: Bool)? {
        let containerBits = UInt(bitPattern: container), keyBits = key.bits
        lock.lock()
        let mask = capacity &- 1
        var index = Self.bucket(containerBits, keyBits, mask)
        while let object = entries[index].box {
            if entries[index].key == keyBits && entries[index].container == containerBits {
                return (object, entries[index].isFactory)
            }
            index = (index &+ 1) & mask
        }
        return nil
    }

    /// Ends a ``beginLookup(container:key:)``.
    @inline(__always)
    func endLookup() {
        lock.unlock()
    }

    // MARK: - Pinning the registrations of running transients

    /// Whether this thread runs a transient's factory found in its cache: until ``unpin()``, no
    /// registration in the cache is released, so the running factories' registrations are used
    /// without retaining them. Guarded by `lock`.
    @exclusivity(unchecked) private var isPinned = false
    /// Registrations evicted from this cache while it was pinned, released by ``unpin()``. Guarded by `lock`.
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

    /// Where an evicted entry goes, under `lock`: back to the caller, to release once unlocked, or, for
    /// a registration while pinned, to ``pinnedEvictions`` (then `nil`).
    private func retire(_ object: AnyObject, isFactory: Bool) -> AnyObject? {
        guard isFactory && isPinned else { return object }
        pinnedEvictions.append(object)
        return nil
    }

    /// Caches `hit` for `key` of `container`. Call only under the container's lock; release what it
    /// returns (a replaced entry) after unlocking.
    func insert(container: ObjectIdentifier, key: _TypeID, _ hit: _CacheHit) -> AnyObject? {
        let containerBits = UInt(bitPattern: container), keyBits = key.bits
        let (object, isFactory): (AnyObject, Bool) = switch hit {
        case .instance(let box): (box, false)
        case .factory(let registration): (registration, true)
        }
        guard caches else { return nil }
        let replaced = lock.withLock { () -> AnyObject? in
            if (count + 1) * 2 > capacity { rehash(capacity: capacity * 2, removing: nil, into: nil) }
            var index = Self.bucket(containerBits, keyBits, capacity - 1)
            while let existing = entries[index].box {
                if entries[index].key == keyBits && entries[index].container == containerBits {
                    let wasFactory = entries[index].isFactory
                    entries[index].box = .passRetained(object)
                    entries[index].isFactory = isFactory
                    return retire(existing.takeRetainedValue(), isFactory: wasFactory)
                }
                index = (index + 1) & (capacity - 1)
            }
            entries[index] = Entry(container: containerBits, key: keyBits, box: .passRetained(object), isFactory: isFactory)
            count += 1
            return nil
        }
        return replaced
    }

    @inline(__always)
    private static func bucket(_ container: UInt, _ key: UInt, _ mask: Int) -> Int {
        // Fibonacci hashing of the two addresses; the high bits are the best mixed.
        let mixed = (key ^ (container &<< 7)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed &>> 40) & mask
    }

    /// Removes every entry of `container`, appending its boxes to `evicted`. Call under `lock`.
    private func removeAll(of container: UInt, into evicted: inout [AnyObject]) {
        rehash(capacity: capacity, removing: container, into: &evicted)
    }

    /// Rebuilds the table at `capacity`, dropping the entries of `container` into `evicted`.
    private func rehash(capacity newCapacity: Int, removing container: UInt?, into evicted: UnsafeMutablePointer<[AnyObject]>?) {
        let old = entries, oldCapacity = capacity
        if let container, !(0..<oldCapacity).contains(where: { old[$0].box != nil && old[$0].container == container }) {
            return
        }
        entries = .allocate(capacity: newCapacity)
        entries.initialize(repeating: Entry(container: 0, key: 0, box: nil, isFactory: false), count: newCapacity)
        capacity = newCapacity
        count = 0
        for index in 0..<oldCapacity {
            guard let box = old[index].box else { continue }
            if let container, old[index].container == container {
                if let released = retire(box.takeRetainedValue(), isFactory: old[index].isFactory) {
                    evicted?.pointee.append(released)
                }
                continue
            }
            var bucket = Self.bucket(old[index].container, old[index].key, newCapacity - 1)
            while entries[bucket].box != nil { bucket = (bucket + 1) & (newCapacity - 1) }
            entries[bucket] = old[index]
            count += 1
        }
        old.deallocate()
    }
}

/// What a thread's cache holds for a key.
enum _CacheHit {
    /// This thread's copy of a cached instance.
    case instance(_Box)
    /// A transient's registration, so its factory runs without the container's lock.
    case factory(_AnyRegistration)
}

/// The lock of one thread's cache: taken by that thread on every cache hit, by others only to evict.
///
/// Lighter than `_Lock` where it matters most (see `_injection_cache_lock`): `os_unfair_lock` on Apple
/// platforms; on Linux, uncontended, one compare-and-swap to take and one exchange to release, and a
/// kernel wait (not a spin) while another thread holds it to evict. Its word sits alone on its cache
/// line, so two threads' locks never share one.
struct _CacheLock: @unchecked Sendable {
    private let word: UnsafeMutablePointer<UInt32>

    init() {
        let line = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 128)
        word = line.bindMemory(to: UInt32.self, capacity: 1)
        word.initialize(to: 0)
    }

    /// Frees the lock; call once, when nothing can take it any more.
    func deallocate() {
        UnsafeMutableRawPointer(word).deallocate()
    }

    /// Takes the lock; pair with ``unlock()``.
    @inline(__always)
    func lock() { _injection_cache_lock(word) }

    /// Releases the lock taken with ``lock()``.
    @inline(__always)
    func unlock() { _injection_cache_unlock(word) }

    @inline(__always)
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        _injection_cache_lock(word)
        defer { _injection_cache_unlock(word) }
        return try body()
    }
}
