import _InjectionPlatform

/// A registry of factories plus the instances of one resettable scope.
///
/// Most code never names a container: ``InjectionManager`` and ``Inject(_:isolation:file:line:)-(Value.Type,_,_,_)`` act on
/// ``InjectionManager/currentContainer``, the process-wide container unless a task bound another with
/// ``InjectionManager/withContainer(_:operation:)``. Use a container directly for isolated tests,
/// previews, or to carry one to a thread outside structured concurrency.
///
/// ```swift
/// let container = InjectionContainer()
/// container.register((any API).self) { MockAPI() }
/// let api = try container.resolve((any API).self)
/// ```
///
/// Every method is safe to call from any thread or task. Factories never run under the container's
/// lock, a `.scoped` or `.singleton` instance is built exactly once per scope even when many threads
/// race for it, and `register`, `unregister` and reset never wait for a running factory.
public final class InjectionContainer: @unchecked Sendable {
    /// The registrations, instances and builds, reachable only under the container's lock.
    let state = LockedState(ContainerState())
    /// The epoch of ``state``, published for lock-free readers (a transient's frame on the fast path).
    /// Written under the lock; a stale value is harmless (a build is checked against the real one).
    private let epochWord = UnsafeMutablePointer<UInt64>.atomicWord()
    /// The readable names of the types registered here, for messages and the graph.
    let names: TypeNames
    /// What was observed for diagnostics: the graph's edges and the evicted instances.
    let observations = LockedState(Observations())
    /// Set on the throwaway copy that `verify()` resolves in.
    let verification: Verification?
    /// Test-only observation points on the wait path; set before the container is shared.
    var waitHooks = WaitHooks()

    /// The lifetime of registrations that name none: ``InjectionLifetime/scoped`` unless set.
    public let defaultLifetime: InjectionLifetime
    /// The test this container was made for (by `InjectionTesting`), named in trap messages.
    package let testName: String?

    /// Creates an empty container.
    ///
    /// ```swift
    /// let container = InjectionContainer()
    /// let transients = InjectionContainer(defaultLifetime: .transient)   // Swinject's defaultObjectScope
    /// ```
    /// - Parameter defaultLifetime: The lifetime of a `register` call that names none. The process-wide
    ///   container's is ``InjectionLifetime/scoped``.
    public init(defaultLifetime: InjectionLifetime = .scoped) {
        verification = nil
        self.defaultLifetime = defaultLifetime
        testName = nil
        names = TypeNames(state)
    }

    deinit {
        // Thread caches key entries by this container's address, which a new container may reuse.
        var released: [AnyObject] = []
        ThreadState.forget(ObjectIdentifier(self), into: &released)
        epochWord.deallocate()
    }

    /// Creates a container with the same registrations as `other` and none of its instances.
    ///
    /// ```swift
    /// let copy = InjectionContainer(copying: InjectionManager.currentContainer)
    /// ```
    /// Registering in, resolving from or resetting either container never affects the other.
    /// Singletons are rebuilt in the copy on first resolve. The copy's ``dependencyGraph()`` starts with no
    /// edges, and shows an `implements` alias with its primary's lifetime, as the original's does.
    public convenience init(copying other: InjectionContainer) {
        self.init(copying: other, verification: nil)
    }

    /// A copy of `other` for the test `testName` (`InjectionTesting`'s isolation), which traps name.
    package convenience init(copying other: InjectionContainer, testName: String) {
        self.init(copying: other, verification: nil, testName: testName)
    }

    init(copying other: InjectionContainer, verification: Verification?, testName: String? = nil) {
        self.verification = verification
        self.testName = testName ?? other.testName
        defaultLifetime = other.defaultLifetime
        names = TypeNames(state)
        let registrations = other.state.withLock { $0.registrations }
        state.withLock { $0 = ContainerState(registrations: registrations) }
    }

    // MARK: - Registration

    /// Registers the factory that builds `type`, replacing any earlier registration of it.
    ///
    /// The factory runs lazily, on first resolve, and may resolve its own dependencies, so
    /// registration order does not matter. Replacing a registration evicts its cached instance.
    ///
    /// ```swift
    /// container.register((any API).self) { LiveAPI(clock: Inject()) }
    /// container.register((any Clock).self, lifetime: .singleton) { SystemClock() }
    /// container.register(DataProvider.self) {
    ///     DataProvider()
    /// } postConstruction: { provider in
    ///     provider.delegate = Inject(ViewController.self)   // ViewController injects DataProvider
    /// }
    /// ```
    /// - Parameters:
    ///   - type: The type resolved by `Inject()` and ``resolve(_:isolation:)-(Value.Type,_)``, usually a protocol.
    ///   - lifetime: How long a built instance is kept. `nil` (the default): the container's
    ///     ``defaultLifetime``, ``InjectionLifetime/scoped`` unless set.
    ///   - file: The file that registers (leave the default): messages and the graph name it for a
    ///     `private` type, whose name alone cannot tell it from another.
    ///   - factory: Builds an instance; may throw, which ``resolve(_:isolation:)-(Value.Type,_)`` reports as
    ///     ``InjectionError/Kind/factoryFailed`` without caching anything.
    ///   - postConstruction: Runs on the new instance once the outermost synchronous resolve has built
    ///     and cached the whole graph, so it can resolve types that need this one, in whichever order
    ///     they were asked for: the way to close a deliberate cycle. (Under ``resolveAsync(_:)-(Value.Type)``
    ///     it runs right after the instance is cached.) Other threads may see the instance before it
    ///     finishes. If it throws, the instance and everything else its resolve built are evicted and the
    ///     resolve throws. With `.transient` nothing is cached, so it cannot close a cycle.
    @inlinable @discardableResult
    public func register<Value>(
        _ type: Value.Type,
        lifetime: InjectionLifetime? = nil,
        file: StaticString = #fileID,
        factory: @escaping @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Value> {
        InjectionRegistration(self, registered(type, lifetime: lifetime, file: file, factory: factory, postConstruction: postConstruction))
    }

    /// Registers the factory for the typed key `Key`: one of several instances of `Key.Value`.
    ///
    /// ```swift
    /// enum PrimaryDatabase: InjectionKey { typealias Value = any Database }
    /// container.register(PrimaryDatabase.self) { SQLiteDatabase(path: "main.db") }
    /// let db = try container.resolve(PrimaryDatabase.self)   // a Database
    /// ```
    /// Keys work with every lifetime and every other method: `resolve`, `isRegistered`, `unregister`,
    /// `verify()` and the graph, where the key's name stands for the instance.
    @inlinable @discardableResult
    public func register<Key: InjectionKey>(
        _ key: Key.Type,
        lifetime: InjectionLifetime? = nil,
        file: StaticString = #fileID,
        factory: @escaping @Sendable () throws -> Key.Value,
        postConstruction: (@Sendable (Key.Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Key.Value> {
        InjectionRegistration(self, registered(key: key, lifetime: lifetime, file: file, factory: factory, postConstruction: postConstruction))
    }

    /// Registers `factory` for `type` and returns the registration.
    ///
    /// Out of line, below `register`, which is inlined into its caller: there, a handle nobody keeps
    /// costs no reference count (at launch, most are dropped at once), where a handle returned from
    /// across the module boundary took a reference to the container and the registration and dropped both.
    @usableFromInline
    func registered<Value>(
        _ type: Value.Type, lifetime: InjectionLifetime?, file: StaticString,
        factory: @escaping @Sendable () throws -> Value, postConstruction: (@Sendable (Value) throws -> Void)?
    ) -> Registration {
        registered(Registration(AnyType(type), lifetime: lifetime ?? defaultLifetime, file: file, factory: factory, postConstruction: postConstruction))
    }

    /// Registers `factory` for the typed key `Key` and returns the registration (see the other).
    @usableFromInline
    func registered<Key: InjectionKey>(
        key: Key.Type, lifetime: InjectionLifetime?, file: StaticString,
        factory: @escaping @Sendable () throws -> Key.Value, postConstruction: (@Sendable (Key.Value) throws -> Void)?
    ) -> Registration {
        registered(Registration(AnyType(key: key), lifetime: lifetime ?? defaultLifetime, file: file, factory: factory, postConstruction: postConstruction))
    }

    /// Registers `registration` and returns it.
    func registered(_ registration: consuming Registration) -> Registration {
        register(registration)
        return registration
    }

    /// Registers an instance made already, shared as a `.singleton`.
    ///
    /// ```swift
    /// let config = Config(contentsOf: url)
    /// container.register(Config.self, instance: config)
    /// ```
    /// The instance is taken with `sending`, so a non-`Sendable` value made at launch can be handed over:
    /// the caller must not use it afterwards except through the container. It stays yours: the container
    /// never calls ``InjectionDisposable/dispose()`` on it, and a copy of the container
    /// (`InjectionContainer(copying:)`, each isolated test's) shares the same object. A
    /// `postConstruction` step added to it runs once for the object, in whichever container resolves it
    /// first (and again only if it failed).
    @discardableResult
    @_disfavoredOverload  // A trailing closure is a factory, even where a closure converts to `Value` (`Any`).
    public func register<Value>(
        _ type: Value.Type, instance: sending Value, file: StaticString = #fileID
    ) -> InjectionRegistration<Value> {
        let held = Unchecked(instance)
        return InjectionRegistration(self, registered(Registration(
            AnyType(type), lifetime: .singleton, file: file, factory: { held.value }, postConstruction: nil, ownsInstances: false)))
    }

    /// Registers an instance made already for the typed key `Key`, shared as a `.singleton`.
    @discardableResult
    @_disfavoredOverload  // A trailing closure is a factory, even where a closure converts to `Value` (`Any`).
    public func register<Key: InjectionKey>(
        _ key: Key.Type, instance: sending Key.Value, file: StaticString = #fileID
    ) -> InjectionRegistration<Key.Value> {
        let held = Unchecked(instance)
        return InjectionRegistration(self, registered(Registration(
            AnyType(key: key), lifetime: .singleton, file: file, factory: { held.value }, postConstruction: nil, ownsInstances: false)))
    }

    /// Removes the registration of `type` and its cached instance.
    ///
    /// A resolve that is building `type` right now still returns its instance but does not cache it.
    public func unregister<Value>(_ type: Value.Type) {
        unregister(AnyType(type))
    }

    /// Removes the registration of the typed key `Key` and its cached instance.
    ///
    /// For a class that is both an ``InjectionKey`` and a registered type, this removes the key's
    /// registration; the type's stays.
    public func unregister<Key: InjectionKey>(_ key: Key.Type) {
        unregister(AnyType(key: key))
    }

    /// Whether a factory is registered for `type`.
    public func isRegistered<Value>(_ type: Value.Type) -> Bool {
        isRegistered(AnyType(type))
    }

    /// Whether a factory is registered for the typed key `Key`.
    ///
    /// For a class that is both an ``InjectionKey`` and a registered type, this asks about the key.
    public func isRegistered<Key: InjectionKey>(_ key: Key.Type) -> Bool {
        isRegistered(AnyType(key: key))
    }

    // MARK: - Resolution

    /// Returns the instance registered for `type`, building it if needed; throws instead of trapping.
    ///
    /// ```swift
    /// let api = try container.resolve((any API).self)
    /// ```
    /// - Throws: ``InjectionError``: ``InjectionError/Kind/notRegistered``, ``InjectionError/Kind/cycle``,
    ///   ``InjectionError/Kind/factoryFailed`` (a factory or `postConstruction`, here or in a dependency
    ///   resolved with `try`), ``InjectionError/Kind/wrongIsolation`` (a main-actor factory off the main
    ///   actor), ``InjectionError/Kind/asyncFactory`` (an async factory not built yet),
    ///   ``InjectionError/Kind/weakNeedsClass``, or ``InjectionError/Kind/resolvedDuringReset``.
    public func resolve<Value>(
        _ type: Value.Type = Value.self, isolation: isolated (any Actor)? = #isolation
    ) throws(InjectionError) -> Value {
        let thread = ThreadState.current
        return try resolve(AnyType(type), as: Value.self, binding: Binding.current(thread), thread: thread, caller: isolation)
    }

    /// Returns the instance registered for the typed key `Key`; throws instead of trapping.
    ///
    /// ```swift
    /// let cache = try container.resolve(CacheDatabase.self)   // a Database
    /// ```
    public func resolve<Key: InjectionKey>(
        _ key: Key.Type, isolation: isolated (any Actor)? = #isolation
    ) throws(InjectionError) -> Key.Value {
        let thread = ThreadState.current
        return try resolve(AnyType(key: key), as: Key.Value.self, binding: Binding.current(thread), thread: thread, caller: isolation)
    }

    // MARK: - Scope

    /// Ends the current scope: evicts every `.scoped` instance and forgets every `.weak` one; registrations
    /// and singletons stay.
    ///
    /// Call it at logout. Objects that already hold a previous-scope instance in a `let` keep it;
    /// rebuild them after the reset. A resolve that was building a scoped instance when the reset
    /// happened returns it to its caller but never puts it in the new scope. Evicted instances are
    /// released outside the container's lock.
    public func resetCurrentContainer() {
        perform(.reset)
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
    /// A block nested in `body` joins it (if the nested one throws, nothing of it is applied); one in a
    /// task started inside `body`, which may outlive it, is applied on its own when it returns.
    ///
    /// > Warning: Resolving from this container inside `body` fails with
    /// > ``InjectionError/Kind/resolvedDuringReset``: the new scope does not exist until `body` returns.
    public func resetCurrentContainer<Failure: Error>(_ body: () throws(Failure) -> Void) throws(Failure) {
        if let transaction = openTransaction(), transaction.isRunningHere, let mark = transaction.mark(), transaction.record(.reset) {
            // Nested: the outer block commits everything, or, if this one throws, nothing of this one.
            do {
                try body()
            } catch {
                transaction.discard(since: mark)
                throw error
            }
            return
        }
        let transaction = Transaction(container: self, outer: Binding.transaction)
        do {
            try Binding.withContainer(self, transaction: transaction, body)
        } catch {
            _ = transaction.commit()
            throw error
        }
        apply { state in
            // Committed under the container's lock: a task that outlived the block and registers now
            // waits for the lock and lands after the block's operations, not between them.
            var evictions = ContainerState.Evictions()
            for operation in transaction.commit() {
                carryOut(operation, on: &state).map { evictions.merge($0) }
            }
            return evictions
        }
    }

    /// Removes every registration and cached instance, singletons included.
    ///
    /// ```swift
    /// container.removeAll()
    /// container.isRegistered((any API).self)   // false
    /// ```
    /// Evicted instances are told (``InjectionDisposable``) and released as by a reset, outside the lock.
    /// The ``dependencyGraph()`` forgets the edges seen so far, and the diagnostics the types it reported:
    /// both start again from what is registered next. Inside `resetCurrentContainer { }` it lands with the block, and registrations made after it in the
    /// block stay.
    public func removeAll() {
        perform(.removeAll)
    }

    // MARK: - Internals

    func unregister(_ requested: AnyType) {
        perform(.unregister(requested))
    }

    /// Records `operation` in the open reset block, if there is one, to apply with it; else applies it now.
    @inline(__always)
    private func perform(_ operation: Transaction.Operation) {
        if let transaction = openTransaction(), transaction.record(operation) { return }
        apply { carryOut(operation, on: &$0) }
    }

    /// Applies `operation` to `state`: what each operation does, whether it is applied at once or by the
    /// reset block that recorded it.
    @inline(__always)
    private func carryOut(_ operation: Transaction.Operation, on state: inout ContainerState) -> ContainerState.Evictions? {
        switch operation {
        case .reset: return state.reset()
        case .register(let key, let registration): return forgettingEdges(of: key, state.replace(key, with: registration))
        case .registerWhileCurrent(let key, let registration, let current):
            return forgettingEdges(of: key, state.replace(key, with: registration, whileCurrent: current).evictions)
        case .unregister(let key): return forgettingEdges(of: key, state.replace(key, with: nil))
        case .removeAll:
            forgetObservations(of: state)
            return state.removeAll()
        }
    }

    /// `evictions`, having forgotten the graph's edges from `key` if they say a registration of it was
    /// replaced: what the old factory resolved says nothing of the new one, whose first run records its
    /// own. Under the container's lock, which comes before the observations lock.
    @inline(__always)
    private func forgettingEdges(of key: AnyType, _ evictions: ContainerState.Evictions?) -> ContainerState.Evictions? {
        if evictions != nil { forgetEdges(from: key) }
        return evictions
    }

    func isRegistered(_ requested: AnyType) -> Bool {
        if let transaction = openTransaction(), let decided = transaction.registration(for: requested) { return decided }
        return state.withLock { $0.registrations[requested] != nil }
    }

    /// Registers `registration`, in the open reset block if there is one. With `current`, a change through
    /// a handle of that registration (`InjectionRegistration`): made only while `current` is the registration
    /// of its key, checked and made in one lock hold; returns `false`, having changed nothing, if it is not.
    @discardableResult
    func register(_ registration: Registration, whileCurrent current: Registration? = nil) -> Bool {
        let key = registration.type
        if let transaction = openTransaction() {
            if let current {
                // Current is what the block recorded, else what the state holds: read under the container's
                // lock, then the transaction's (their order). Another key (an alias) registers unconditionally.
                let operation: Transaction.Operation = key == current.type
                    ? .registerWhileCurrent(key, registration, current: current) : .register(key, registration)
                let recorded = state.withLock { state in
                    transaction.record(operation, whileCurrent: current, isCurrentInState: state.registrations[current.type] === current)
                }
                if let recorded { return recorded }
            } else if transaction.record(.register(key, registration)) {
                return true
            }
        }
        var isCurrent = true, evictedAnInstance = false
        apply { state in
            let evictions: ContainerState.Evictions?
            if let current {
                (isCurrent, evictions) = state.replace(key, with: registration, whileCurrent: current)
            } else {
                evictions = state.replace(key, with: registration)
            }
            evictedAnInstance = evictions?.replacedHeldInstances ?? false
            return forgettingEdges(of: key, evictions)
        }
        if evictedAnInstance { reportStaleDependents(of: registration.type) }
        return isCurrent
    }

    /// The open `resetCurrentContainer { }` of this container that the current code runs inside, if any:
    /// in this task, or in the block of another container's that factories in between run in.
    func openTransaction() -> Transaction? {
        Binding.transaction?.open(for: self)
    }

    /// The epoch of the current scope, read without the lock (see `epochWord`).
    var epoch: UInt64 { _injection_load_u64(epochWord) }

    /// Applies a change to the state and carries out what it returns: under the lock, evicts the
    /// changed keys from every thread's cache and finishes abandoned builds in the wait-for graph, so
    /// no thread sees the change half-done; after unlocking, tells evicted ``InjectionDisposable``
    /// instances, remembers them for `liveInstancesFromPreviousScopes()`, and releases them. A change
    /// that returns `nil` took nothing out (and left the epoch alone).
    @inline(__always)  // Its callers' closures are then inlined too, with no context or reference count.
    func apply(_ change: (inout ContainerState) -> ContainerState.Evictions?) {
        let taken = state.withLock { state -> ContainerState.Evictions? in
            guard var evictions = change(&state) else { return nil }
            _injection_store_u64(epochWord, state.epoch)
            if !evictions.abandoned.isEmpty {
                for build in evictions.abandoned { WaitGraph.finished(build) }  // No wait may go through them.
                self.state.broadcast()  // Their waiters claim again.
            }
            ThreadState.evict(evictions.threadCacheKeys, of: ObjectIdentifier(self), into: &evictions.released)
            return evictions
        }
        if let taken { finish(taken) }
    }

    /// What `apply` does after unlocking, out of line: a register at launch takes nothing out, and should
    /// not pay for what this needs (the metadata of an array of continuations, for one).
    @inline(never)
    private func finish(_ evictions: consuming ContainerState.Evictions) {
        for waiter in evictions.waiters { waiter.resume() }
        guard !evictions.instances.isEmpty else { return }
        for index in evictions.instances.indices where evictions.instances[index].isDisposable {  // No copy of the others.
            (evictions.instances[index].object as? any InjectionDisposable)?.dispose()
        }
        remember(evictions.instances)
        // `evictions` is released here, outside every lock: a deinit may use the container.
    }
}

extension ContainerState.Evictions {
    /// Adds what another change took out.
    mutating func merge(_ other: Self) {
        instances += other.instances
        abandoned += other.abandoned
        waiters += other.waiters
        threadCacheKeys += other.threadCacheKeys
        released += other.released
        values += other.values
    }
}
