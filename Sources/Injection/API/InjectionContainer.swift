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
    package let state = LockedState(ContainerState())
    /// The readable names of the types registered here, for messages and the graph.
    package let names: TypeNames
    /// What was observed for diagnostics, handed over by each build when it completes (never by a cached
    /// resolve): "A needs B", from the first run of each registration's factory; what the build of each kept
    /// instance resolved, directly or through transients, for the re-registration report; weak references to
    /// evicted instances, for `liveInstancesFromPreviousScopes()`, and whether to keep those; the types whose
    /// stale dependents were reported (each is reported once); the container's own `diagnosticsHandler`, in an
    /// `Unchecked`: a closure kept as a tuple element would be re-wrapped in a reabstraction thunk each way on
    /// every `withLock` (the tuple is generic storage there), nesting deeper with every use until a call
    /// overflows the stack.
    let observations = LockedState((
        edges: [AnyType: Set<AnyType>](), dependencies: [AnyType: [AnyType]](), retired: [WeakReference](),
        tracksEvictions: _isDebugAssertConfiguration(), reportedStale: Set<AnyType>(),
        handler: Unchecked<(@Sendable (String) -> Void)?>(nil), reportedLaunch: Set<AnyType>()))
    /// Set on the throwaway copy that `verify()` resolves in.
    let verification: Verification?
    /// Points where a test acts while a synchronous resolve starts waiting for another's build: before it
    /// joins the wait-for graph and after (`InjectionProbe.onWait`). Set before the container is shared.
    package var waitHooks: (beforeJoining: (@Sendable (Any.Type) -> Void)?, afterJoining: (@Sendable (Any.Type) -> Void)?) = (nil, nil)

    /// The lifetime of registrations that name none: ``InjectionLifetime/scoped`` unless set.
    public let defaultLifetime: InjectionLifetime
    /// The test this container was made for (by `InjectionTesting`), named in trap messages.
    package let testName: String?
    /// A test's container's: the launch registrations, the ones it was copied with (or, copied from another
    /// test's container, that one's), kept alive so their identities stay theirs; what a test or its
    /// `startingWith:` registers is not among them. With `report`, the test isolates strictly: a build of a
    /// launch registration is reported there.
    let strict: (launch: [ObjectIdentifier: Registration], report: (@Sendable (String) -> Void)?)?

    /// Creates an empty container.
    ///
    /// ```swift
    /// let container = InjectionContainer()
    /// let transients = InjectionContainer(defaultLifetime: .transient)   // Swinject's defaultObjectScope
    /// ```
    /// - Parameter defaultLifetime: The lifetime of a `register` call that names none. The process-wide
    ///   container's is ``InjectionLifetime/scoped``.
    public init(defaultLifetime: InjectionLifetime = .scoped) {
        (verification, self.defaultLifetime, testName, strict) = (nil, defaultLifetime, nil, nil)
        names = TypeNames(state)
    }

    deinit {
        if let strict { Self.countTestContainer(-1, isStrict: strict.report != nil) }
    }

    /// Creates a container with the same registrations as `other` and none of its instances.
    ///
    /// ```swift
    /// let copy = InjectionContainer(copying: InjectionManager.currentContainer)
    /// ```
    /// Registering in, resolving from or resetting either container never affects the other.
    /// Singletons are rebuilt in the copy on first resolve. The copy's ``dependencyGraph()`` starts with no
    /// edges, and shows an `implements` alias with its primary's lifetime, as the original's does.
    public convenience init(copying other: InjectionContainer) { self.init(copying: other, verification: nil) }

    /// A copy of `other` for the test `testName` (`InjectionTesting`'s isolation), which traps name. With
    /// `strict`, a build of a launch registration (one `other` has now, or, for a copy of another test's
    /// container, one that container started with) is reported there, once per type.
    package convenience init(
        copying other: InjectionContainer, testName: String, strict: (@Sendable (String) -> Void)? = nil
    ) { self.init(copying: other, verification: nil, testName: testName, strict: strict) }

    init(
        copying other: InjectionContainer, verification: Verification?, testName: String? = nil,
        strict report: (@Sendable (String) -> Void)? = nil
    ) {
        self.verification = verification
        self.testName = testName ?? other.testName
        // One read of `other`: the launch registrations are the ones copied.
        let copied = other.state.withLock { ContainerState(registrationsOf: $0) }
        if testName != nil {  // A test's copy.
            let launch = other.strict?.launch ?? Dictionary(
                copied.registrations.map { (ObjectIdentifier($0), $0) }) { first, _ in first }
            strict = (launch, report ?? other.strict?.report)
        } else {
            strict = verification != nil ? nil : other.strict  // A verification builds everything on purpose.
        }
        if let strict { Self.countTestContainer(1, isStrict: strict.report != nil) }
        defaultLifetime = other.defaultLifetime
        names = TypeNames(state)
        state.withLock { $0 = copied }
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
    @discardableResult public func register<Value>(
        _ type: Value.Type, lifetime: InjectionLifetime? = nil, file: StaticString = #fileID,
        factory: @escaping @Sendable () throws -> Value, postConstruction: (@Sendable (Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Value> {
        registered(Registration(AnyType(exactly: type), lifetime: lifetime ?? defaultLifetime, file: file,
            factory: factory, postConstruction: postConstruction))
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
    @discardableResult public func register<Key: InjectionKey>(
        _ key: Key.Type, lifetime: InjectionLifetime? = nil, file: StaticString = #fileID,
        factory: @escaping @Sendable () throws -> Key.Value,
        postConstruction: (@Sendable (Key.Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Key.Value> {
        registered(Registration(AnyType(key: key), lifetime: lifetime ?? defaultLifetime, file: file,
            factory: factory, postConstruction: postConstruction))
    }

    /// Registers `registration` and returns its handle.
    func registered<Value>(_ registration: consuming Registration) -> InjectionRegistration<Value> {
        register(registration)
        return InjectionRegistration(container: self, registration: registration)
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
    @discardableResult @_disfavoredOverload  // A trailing closure is a factory, even where it converts to `Value`.
    public func register<Value>(
        _ type: Value.Type, instance: sending Value, file: StaticString = #fileID
    ) -> InjectionRegistration<Value> {
        let held = Unchecked(instance)
        return registered(Registration(
            AnyType(exactly: type), lifetime: .singleton, file: file, factory: { held.value }, ownsInstances: false))
    }

    /// Registers an instance made already for the typed key `Key`, shared as a `.singleton`.
    @discardableResult @_disfavoredOverload  // A trailing closure is a factory, even where it converts to `Value`.
    public func register<Key: InjectionKey>(
        _ key: Key.Type, instance: sending Key.Value, file: StaticString = #fileID
    ) -> InjectionRegistration<Key.Value> {
        let held = Unchecked(instance)
        return registered(Registration(
            AnyType(key: key), lifetime: .singleton, file: file, factory: { held.value }, ownsInstances: false))
    }

    /// Removes the registration of `type` and its cached instance.
    ///
    /// A resolve that is building `type` right now still returns its instance but does not cache it.
    public func unregister<Value>(_ type: Value.Type) { unregister(AnyType(type)) }

    /// Removes the registration of the typed key `Key` and its cached instance.
    ///
    /// For a class that is both an ``InjectionKey`` and a registered type, this removes the key's
    /// registration; the type's stays.
    public func unregister<Key: InjectionKey>(_ key: Key.Type) { unregister(AnyType(key: key)) }

    /// Whether a factory is registered for `type`.
    public func isRegistered<Value>(_ type: Value.Type) -> Bool { isRegistered(AnyType(type)) }

    /// Whether a factory is registered for the typed key `Key`.
    ///
    /// For a class that is both an ``InjectionKey`` and a registered type, this asks about the key.
    public func isRegistered<Key: InjectionKey>(_ key: Key.Type) -> Bool { isRegistered(AnyType(key: key)) }

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
    ) throws(InjectionError) -> Value { try Self.resolve(AnyType(type), as: Value.self, in: self, caller: isolation) }

    /// Returns the instance registered for the typed key `Key`; throws instead of trapping.
    ///
    /// ```swift
    /// let cache = try container.resolve(CacheDatabase.self)   // a Database
    /// ```
    public func resolve<Key: InjectionKey>(
        _ key: Key.Type, isolation: isolated (any Actor)? = #isolation
    ) throws(InjectionError) -> Key.Value {
        try Self.resolve(AnyType(key: key), as: Key.Value.self, in: self, caller: isolation)
    }

    // MARK: - Scope

    /// Ends the current scope: evicts every `.scoped` instance and forgets every `.weak` one; registrations
    /// and singletons stay.
    ///
    /// ```swift
    /// session.reset()   // at logout
    /// ```
    /// Call it at logout. Objects that already hold a previous-scope instance in a `let` keep it;
    /// rebuild them after the reset. A resolve that was building a scoped instance when the reset
    /// happened returns it to its caller but never puts it in the new scope. Evicted instances are
    /// released outside the container's lock. (``InjectionManager/resetCurrentContainer()`` resets the
    /// current container.)
    public func reset() { perform(.reset) }

    /// Resets the scope and applies the registrations made in `body`, as one atomic step.
    ///
    /// ```swift
    /// session.reset {
    ///     session.register(UserSession.self) { UserSession(user: newUser) }
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
    public func reset<Failure: Error>(_ body: () throws(Failure) -> Void) throws(Failure) { try reset(applying: body) }

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
    public func removeAll() { perform(.removeAll) }
}
