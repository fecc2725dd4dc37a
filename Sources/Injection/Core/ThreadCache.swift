import _InjectionPlatform

/// One thread's cache of what its resolves found, so that the next resolve of the same key needs no
/// container lock: per container, a ``HashTable`` from key to a retained object's address: a cached
/// instance's ``Box``, or a transient's ``TransientFactory`` (with ``tag`` set), which then runs at once.
///
/// Each cache has its own lock, which its thread takes for every lookup (uncontended, so its cache line
/// stays on the thread's core). A container that changes takes the lock of every thread's cache to
/// evict the keys that changed, under the container's own lock, so no thread reads an instance the
/// container no longer holds. An eviction visits only the keys the change touched, in the tables of
/// that container: its cost does not depend on what else the caches hold.
///
/// Lock order: a container's lock → the registry's lock → a cache's lock (an eviction); a container's
/// lock → the building thread's cache lock (an insertion); a container's deinit, or the process-wide
/// container's lock when a strict test starts, → the registry's lock → a cache's lock (``forget(_:into:)``). Evicted objects are handed back, to be released after every
/// lock is dropped, since releasing can run a `deinit`.
///
/// The tables are the header of a `ManagedBuffer` and the lock word its one element: both are reached
/// only through ``withLock(_:)`` (or a lookup), with no run-time exclusivity check.
final class ThreadCache: ManagedBuffer<ThreadCache.Tables, UInt32> {
    /// A table per container that this thread resolved from.
    typealias Tables = [(container: ObjectIdentifier, table: HashTable<UInt>)]

    /// The bit of an entry that marks a transient's factory: an object's address is at least word-aligned.
    private static let tag: UInt = 1

    /// The retained object an entry holds.
    private static func object<T: AnyObject>(_ entry: UInt, as _: T.Type = AnyObject.self) -> Unmanaged<T> {
        .fromOpaque(UnsafeRawPointer(bitPattern: entry & ~tag)!)
    }

    /// An empty cache, which evictions reach once it is ``register()``ed.
    static func make() -> ThreadCache {
        let cache = create(minimumCapacity: 1) { _ in [] } as! ThreadCache
        cache.withUnsafeMutablePointerToElements { $0.initialize(to: 0) }
        return cache
    }

    deinit {
        withUnsafeMutablePointerToHeader { tables in
            for (_, table) in tables.pointee { for (_, entry) in table.entries { Self.object(entry).release() } }
        }
    }

    /// Runs `body` on the tables, under this cache's lock.
    func withLock<Result>(_ body: (inout Tables) -> Result) -> Result {
        withUnsafeMutablePointers { tables, lock in
            _injection_cache_lock(lock)
            defer { _injection_cache_unlock(lock) }
            return body(&tables.pointee)
        }
    }

    /// Takes this cache's lock and returns its entry for `key` of `container`, if any: a cached instance's
    /// box, not retained (copy the value out before ``endLookup()``, which must follow: until then no
    /// eviction can release it), or a transient's factory, retained for the caller.
    func beginLookup(_ key: AnyType, in container: ObjectIdentifier) -> (instance: Unmanaged<Box>?, transient: TransientFactory?) {
        withUnsafeMutablePointers { tables, lock in
            _injection_cache_lock(lock)
            guard let slot = tables.pointee.firstIndex(where: { $0.container == container }),
                  let index = tables.pointee[slot].table.index(of: key) else { return (nil, nil) }
            let entry = tables.pointee[slot].table.element(at: index)
            if entry & Self.tag != 0 { return (nil, Self.object(entry, as: TransientFactory.self).takeUnretainedValue()) }
            return (Self.object(entry, as: Box.self), nil)
        }
    }

    /// Ends a ``beginLookup(_:in:)``.
    func endLookup() { withUnsafeMutablePointerToElements { _injection_cache_unlock($0) } }

    /// Caches `object` for `key` of `container`: a cached instance's box, or a transient's factory.
    /// Call under the container's lock; release what it returns (a replaced entry) after unlocking.
    func insert(_ object: AnyObject, for key: AnyType, in container: ObjectIdentifier) -> AnyObject? {
        let isTransient = object is TransientFactory
        let entry = UInt(bitPattern: Unmanaged.passRetained(object).toOpaque()) | (isTransient ? Self.tag : 0)
        return withLock { tables -> AnyObject? in
            let index = tables.firstIndex { $0.container == container } ?? {
                tables.append((container, HashTable()))
                return tables.count - 1
            }()
            return tables[index].table.insert(entry, for: key).map { Self.object($0).takeRetainedValue() }
        }
    }

    // MARK: - Every thread's cache

    /// Every live thread's cache, by its identity.
    static let registry = LockedState<[ObjectIdentifier: ThreadCache]>([:])

    /// Makes this cache one that evictions reach.
    func register() { Self.registry.withLock { $0[ObjectIdentifier(self)] = self } }

    /// Takes this cache out of the registry: its thread exited. Release it after the call.
    func unregister() { Self.registry.withLock { $0[ObjectIdentifier(self)] = nil } }

    /// Removes `keys` of `container` from every thread's cache, adding what they held to `released`, to
    /// release once all locks are dropped. Call under the container's lock.
    static func evict(_ keys: [AnyType], of container: ObjectIdentifier, into released: inout [AnyObject]) {
        guard !keys.isEmpty else { return }
        forEachTable(of: container) { tables, index in
            let removed = keys.compactMap { tables[index].table.remove($0) }
            released += removed.map { Self.object($0).takeRetainedValue() }
        }
    }

    /// Drops every thread's table of `container`, adding what they held to `released`, to release once all locks
    /// are dropped: a container being deinitialized (a new one may reuse its address), or the process-wide one,
    /// under its lock, when a strict test starts (its instances then stay out of thread caches: see `claim`).
    static func forget(_ container: ObjectIdentifier, into released: inout [AnyObject]) {
        forEachTable(of: container) { tables, index in
            released += tables.remove(at: index).table.entries.map { Self.object($0.element).takeRetainedValue() }
        }
    }

    /// Calls `body` with the tables of each registered cache that has one for `container`, and its index,
    /// under the registry's lock and that cache's lock.
    private static func forEachTable(of container: ObjectIdentifier, _ body: (inout Tables, Int) -> Void) {
        registry.withLock { registry in
            for cache in registry.values {
                cache.withLock { tables in
                    if let index = tables.firstIndex(where: { $0.container == container }) { body(&tables, index) }
                }
            }
        }
    }
}
