import _InjectionPlatform

/// A registry of factories plus the instances of one resettable scope.
///
/// Most code never names a container: ``InjectionManager`` and ``Inject(_:isolation:file:line:)`` act on
/// ``InjectionManager/currentContainer``, the process-wide container unless a task bound another with
/// ``InjectionManager/withContainer(_:operation:)``. Use a container directly for isolated tests,
/// previews, or to carry one to a thread outside structured concurrency.
///
/// ```swift
/// let container = InjectionContainer()
/// container.register(API.self) { MockAPI() }
/// let api = try container.resolve(API.self)
/// ```
///
/// Every method is safe to call from any thread or task. Factories never run under the container's
/// lock, a `.scoped` or `.singleton` instance is built exactly once per scope even when many threads
/// race for it, and `register`, `unregister` and reset never wait for a running factory.
public final class InjectionContainer: @unchecked Sendable {
    // MARK: - State (guarded by `lock`)

    let lock = _Lock()
    var slots: [_TypeID: _Slot] = [:]
    /// Bumped by every reset; a scoped build that started in an older scope is never cached.
    /// Written under `lock`; read under it, or without it where a stale number is harmless (a
    /// resolution's start: its builds are checked against the current number under the lock).
    var scope: UInt64 {
        get { _injection_load_u64(scopeWord) }
        set { _injection_store_u64(scopeWord, newValue) }
    }
    private let scopeWord: UnsafeMutablePointer<UInt64> = {
        let word = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        word.initialize(to: 0)
        return word
    }()
    /// Whether some thread's `_ThreadState` may hold an entry of this container.
    var isInThreadCaches = false
    /// The non-singleton slots that held an instance or a build since the last reset: all a reset has
    /// to visit, however many types are registered. A slot leaves it when it leaves `slots` (`detach`).
    var scopedSlots: [_Slot] = []

    // MARK: - Diagnostics

    /// "A needs B", recorded whenever a factory resolves something; guarded by `graphLock`.
    let graphLock = _Lock()
    var edges: Set<InjectionGraph._Edge> = []
    /// Set on the throwaway copy that `verify()` resolves in.
    let verification: _Verification?
    /// The readable names of the types registered here, for messages and the graph.
    let typeNames: _TypeNames
    /// Weak references to evicted instances, for `liveInstancesFromPreviousScopes()`; guarded by `graphLock`.
    var retired: [_WeakReference] = []
    var isTrackingEvictions = _isDebugAssertConfiguration()
    /// Test-only observation points on the wait path; set before the container is shared.
    var waitHooks = _WaitHooks()

    /// Creates an empty container.
    public init() {
        verification = nil
        typeNames = _TypeNames()
    }

    deinit {
        // Thread caches key entries by this container's address, which a new container may reuse.
        if isInThreadCaches { _ = _ThreadState.evict(container: ObjectIdentifier(self)) }
        scopeWord.deallocate()
    }

    /// Creates a container with the same registrations as `other` and none of its instances.
    ///
    /// ```swift
    /// let copy = InjectionContainer(copying: InjectionManager.currentContainer)
    /// ```
    /// Registering in, resolving from or resetting either container never affects the other.
    /// Singletons are rebuilt in the copy on first resolve.
    public convenience init(copying other: InjectionContainer) {
        self.init(copying: other, verification: nil)
    }

    init(copying other: InjectionContainer, verification: _Verification?) {
        self.verification = verification
        typeNames = _TypeNames(copying: other.typeNames)
        slots = other.lock.withLock { other.slots.mapValues { _Slot($0.registration) } }
    }

    // MARK: - Registration

    /// Registers the factory that builds `type`, replacing any earlier registration of it.
    ///
    /// The factory runs lazily, on first resolve, and may resolve its own dependencies, so
    /// registration order does not matter. Replacing a registration evicts its cached instance.
    ///
    /// ```swift
    /// container.register(API.self) { LiveAPI(clock: Inject()) }
    /// container.register(Clock.self, lifetime: .singleton) { SystemClock() }
    /// container.register(DataProvider.self) {
    ///     DataProvider()
    /// } postConstruction: { provider in
    ///     provider.delegate = Inject(ViewController.self)   // ViewController injects DataProvider
    /// }
    /// ```
    /// - Parameters:
    ///   - type: The type resolved by `Inject()` and ``resolve(_:)``, usually a protocol.
    ///   - lifetime: How long a built instance is kept. Defaults to ``InjectionLifetime/scoped``.
    ///   - file: The file that registers (leave the default): messages and the graph name it for a
    ///     `private` type, whose name alone cannot tell it from another.
    ///   - factory: Builds an instance; may throw, which ``resolve(_:)`` reports as
    ///     ``InjectionError/Kind/factoryFailed`` without caching anything.
    ///   - postConstruction: Runs on the new instance once the outermost synchronous resolve has built
    ///     and cached the whole graph, so it can resolve types that need this one, in whichever order
    ///     they were asked for: the way to close a deliberate cycle. (Under ``resolveAsync(_:)-(Value.Type)``
    ///     it runs right after the instance is cached.) Other threads may see the instance before it
    ///     finishes. If it throws, the instance and the root of its resolve are evicted and the resolve
    ///     throws. With `.transient` nothing is cached, so it cannot close a cycle.
    public func register<Value>(
        _ type: Value.Type,
        lifetime: InjectionLifetime = .scoped,
        file: StaticString = #fileID,
        factory: @escaping @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)? = nil
    ) {
        _register(_Registration(lifetime: lifetime, type: _AnyType(type), factory: factory, postConstruction: postConstruction), file: file)
    }

    /// Registers the factory for the typed key `Key`: one of several instances of `Key.Value`.
    ///
    /// ```swift
    /// enum PrimaryDatabase: InjectionKey { typealias Value = Database }
    /// container.register(PrimaryDatabase.self) { SQLiteDatabase(path: "main.db") }
    /// let db = try container.resolve(PrimaryDatabase.self)   // a Database
    /// ```
    /// Keys work with every lifetime and every other method: `resolve`, `isRegistered`, `unregister`,
    /// `verify()` and the graph, where the key's name stands for the instance.
    public func register<Key: InjectionKey>(
        _ key: Key.Type,
        lifetime: InjectionLifetime = .scoped,
        file: StaticString = #fileID,
        factory: @escaping @Sendable () throws -> Key.Value,
        postConstruction: (@Sendable (Key.Value) throws -> Void)? = nil
    ) {
        _register(_Registration(lifetime: lifetime, type: _AnyType(key: key), factory: factory, postConstruction: postConstruction), file: file)
    }

    /// Removes the registration of `type` and its cached instance.
    ///
    /// A resolve that is building `type` right now still returns its instance but does not cache it.
    public func unregister<Value>(_ type: Value.Type) {
        unregister(_AnyType(type))
    }

    /// Removes the registration of the typed key `Key` and its cached instance.
    ///
    /// For a class that is both an ``InjectionKey`` and a registered type, this removes the key's
    /// registration; the type's stays.
    public func unregister<Key: InjectionKey>(_ key: Key.Type) {
        unregister(_AnyType(key: key))
    }

    /// Whether a factory is registered for `type`.
    public func isRegistered<Value>(_ type: Value.Type) -> Bool {
        isRegistered(_AnyType(type))
    }

    /// Whether a factory is registered for the typed key `Key`.
    ///
    /// For a class that is both an ``InjectionKey`` and a registered type, this asks about the key.
    public func isRegistered<Key: InjectionKey>(_ key: Key.Type) -> Bool {
        isRegistered(_AnyType(key: key))
    }

    // MARK: - Resolution

    /// Returns the instance registered for `type`, building it if needed; throws instead of trapping.
    ///
    /// ```swift
    /// let api = try container.resolve(API.self)
    /// ```
    /// - Throws: ``InjectionError``: ``InjectionError/Kind/notRegistered``, ``InjectionError/Kind/cycle``,
    ///   ``InjectionError/Kind/factoryFailed`` (a factory or `postConstruction`, here or in a dependency
    ///   resolved with `try`), ``InjectionError/Kind/wrongIsolation`` (a main-actor factory off the main
    ///   actor), ``InjectionError/Kind/asyncFactory`` (an async factory not built yet),
    ///   ``InjectionError/Kind/weakNeedsClass``, or ``InjectionError/Kind/resolvedDuringReset``.
    public func resolve<Value>(
        _ type: Value.Type = Value.self, isolation: isolated (any Actor)? = #isolation
    ) throws(InjectionError) -> Value {
        let (frame, startsRoot) = _Context.parent
        return try _resolve(
            _AnyType(type), as: Value.self, frame: frame, transaction: _Context.transaction,
            threadState: _ThreadState.current, caller: isolation, startsRoot: startsRoot)
    }

    /// Returns the instance registered for the typed key `Key`; throws instead of trapping.
    ///
    /// ```swift
    /// let cache = try container.resolve(CacheDatabase.self)   // a Database
    /// ```
    public func resolve<Key: InjectionKey>(
        _ key: Key.Type, isolation: isolated (any Actor)? = #isolation
    ) throws(InjectionError) -> Key.Value {
        let (frame, startsRoot) = _Context.parent
        return try _resolve(
            _AnyType(key: key), as: Key.Value.self, frame: frame, transaction: _Context.transaction,
            threadState: _ThreadState.current, caller: isolation, startsRoot: startsRoot)
    }

    // MARK: - Scope

    /// Ends the current scope: evicts every `.scoped` instance; registrations and singletons stay.
    ///
    /// Call it at logout. Objects that already hold a previous-scope instance in a `let` keep it;
    /// rebuild them after the reset. A resolve that was building a scoped instance when the reset
    /// happened returns it to its caller but never puts it in the new scope. Evicted instances are
    /// released outside the container's lock.
    public func resetCurrentContainer() {
        if let transaction = openTransaction(), transaction.record(.reset) { return }
        mutate { resetLocked(&$0) }
    }

    /// Resets the scope and applies the registrations made in `body`, as one atomic step.
    ///
    /// ```swift
    /// InjectionManager.resetCurrentContainer {
    ///     InjectionManager.register(UserSession.self) { UserSession(user: newUser) }
    /// }
    /// ```
    /// `register` and `unregister` calls inside `body` (on this container, from this task and its child
    /// tasks) are collected and applied together with the reset when `body` returns, so no resolve on
    /// any thread sees the reset without the new registrations. If `body` throws, nothing is applied.
    ///
    /// > Warning: Resolving from this container inside `body` fails with
    /// > ``InjectionError/Kind/resolvedDuringReset``: the new scope does not exist until `body` returns.
    public func resetCurrentContainer<Failure: Error>(_ body: () throws(Failure) -> Void) throws(Failure) {
        if let transaction = openTransaction(), let mark = transaction.mark(), transaction.record(.reset) {
            // Nested: the outer block commits everything, or, if this one throws, nothing of this one.
            do {
                try body()
            } catch {
                transaction.discard(since: mark)
                throw error
            }
            return
        }
        let outer = _Context.active
        let transaction = _Transaction(container: self, outer: outer?.transaction)
        let context = _Context(container: self, frame: outer?.frame, transaction: transaction)
        do {
            try _Context.withSyncScope(context, body)
        } catch {
            _ = transaction.commit()
            throw error
        }
        mutate { evictions in
            // Committed under the container's lock: a task that outlived the block and registers now
            // waits for the lock and lands after the block's operations, not between them.
            for operation in transaction.commit() {
                switch operation {
                case .reset: resetLocked(&evictions)
                case .register(let key, let registration): evictions.remove(detach(slots.updateValue(_Slot(registration), forKey: key)))
                case .unregister(let key): evictions.remove(detach(slots.removeValue(forKey: key)))
                }
            }
        }
    }

    // MARK: - Internals

    func unregister(_ requested: _AnyType) {
        let key = requested.id
        if let transaction = openTransaction(), transaction.record(.unregister(key)) { return }
        mutate { $0.remove(detach(slots.removeValue(forKey: key))) }
    }

    func isRegistered(_ requested: _AnyType) -> Bool {
        let key = requested.id
        if let transaction = openTransaction(), let decided = transaction.registration(for: key) { return decided }
        return lock.withLock { slots[key] != nil }
    }

    func _register(_ registration: _AnyRegistration, file: StaticString) {
        typeNames.noteRegistered(registration.type.type, file: file)
        let key = registration.type.id
        if let transaction = openTransaction(), transaction.record(.register(key, registration)) { return }
        mutate { $0.remove(detach(slots.updateValue(_Slot(registration), forKey: key))) }
    }

    /// Changes the state under the lock, then, after unlocking, tells evicted ``InjectionDisposable``
    /// instances, records them for `liveInstancesFromPreviousScopes()`, and releases them.
    ///
    /// Every thread's cached copies of this container are evicted too, and waiters are woken, so they
    /// see the change.
    func mutate(_ body: (inout _Evictions) -> Void) {
        let evictions = lock.withLock { () -> _Evictions in
            var evictions = _Evictions()
            body(&evictions)
            evictions.released += evictFromThreadCachesLocked()
            lock.broadcast()
            return evictions
        }
        for (registration, instance) in evictions.disposable {
            registration.disposable(in: instance)?.dispose()
        }
        guard !evictions.evicted.isEmpty, graphLock.withLock({ isTrackingEvictions }) else { return }
        let retiring = evictions.evicted.compactMap { registration, instance in
            registration.object(in: instance).map { _WeakReference($0, type: registration.type) }
        }
        graphLock.withLock {
            retired.removeAll { $0.object == nil }
            retired += retiring
        }
        // `evictions` is released here, outside every lock: a deinit may use the container.
    }

    /// Removes this container's entries from every thread's cache; returns them for release after unlocking.
    func evictFromThreadCachesLocked() -> [AnyObject] {
        guard isInThreadCaches else { return [] }
        isInThreadCaches = false
        return _ThreadState.evict(container: ObjectIdentifier(self))
    }

    /// The open `resetCurrentContainer { }` of this container that the current code runs inside, if any:
    /// in this task, or in the block of another container's that factories in between run in.
    func openTransaction() -> _Transaction? {
        _Context.transaction?.open(for: self)
    }

    /// Starts a new scope: evicts scoped instances, forgets weak ones, and abandons their builds.
    func resetLocked(_ evictions: inout _Evictions) {
        scope &+= 1
        evictions.evicted.reserveCapacity(scopedSlots.count)
        for slot in scopedSlots {
            slot.scopeIndex = nil
            if let instance = slot.cached { evictions.evict(instance, from: slot) }
            slot.cached = nil
            slot.weakInstance = nil
            if let build = slot.build, build.hasWaiters { _WaitGraph.finished(build) }  // Abandoned: no wait may go through it.
            slot.build = nil
        }
        scopedSlots.removeAll(keepingCapacity: true)
    }

    /// Lists `slot` for the next reset if it is not a singleton's; call under the lock when it gets an
    /// instance or a build.
    @inline(__always)
    func noteInScope(_ slot: _Slot) {
        guard slot.scopeIndex == nil, slot.registration.lifetime != .singleton else { return }
        slot.scopeIndex = scopedSlots.count
        scopedSlots.append(slot)
    }

    /// Marks a slot that leaves `slots` as detached (a build that finishes in it caches nothing) and takes
    /// it out of `scopedSlots` (swap-remove, O(1)), so the list never keeps a removed registration (and
    /// what its factory captured) alive. Every slot that leaves `slots` goes through here; call under the lock.
    func detach(_ slot: _Slot?) -> _Slot? {
        slot?.isDetached = true
        guard let slot, let index = slot.scopeIndex else { return slot }
        let last = scopedSlots.removeLast()
        if last !== slot {
            scopedSlots[index] = last
            last.scopeIndex = index
        }
        slot.scopeIndex = nil
        return slot
    }
}

/// What a mutation took out of a container, to be told and released after the lock is dropped.
struct _Evictions {
    /// Objects to release outside the lock.
    var released: [AnyObject] = []
    /// Cached instances the container let go, with their registrations.
    var evicted: [(_AnyRegistration, _Box)] = []
    /// Those of `evicted` that conform to `InjectionDisposable`.
    var disposable: [(_AnyRegistration, _Box)] = []

    /// Takes in an instance the container let go; call under the container's lock.
    mutating func evict(_ instance: _Box, from slot: _Slot) {
        evicted.append((slot.registration, instance))
        if slot.isDisposable(instance) { disposable.append((slot.registration, instance)) }
    }

    /// Takes in a slot that left the container, with its cached instance; its build is abandoned.
    mutating func remove(_ slot: _Slot?) {
        guard let slot else { return }
        if let build = slot.build, build.hasWaiters { _WaitGraph.finished(build) }
        released.append(slot)
        if let instance = slot.cached { evict(instance, from: slot) }
    }
}
