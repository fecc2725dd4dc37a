import _InjectionPlatform

/// The global entry point: registers, resolves and resets on the current container.
///
/// Every static method acts on ``currentContainer``: the container bound to the current task by
/// ``withContainer(_:operation:)``, or else the process-wide ``sharedContainer``.
///
/// ```swift
/// // At launch, one line per service:
/// InjectionManager.register((any API).self) { LiveAPI() }
/// InjectionManager.register((any Clock).self, lifetime: .singleton) { SystemClock() }
///
/// // At logout:
/// InjectionManager.resetCurrentContainer()
/// ```
public enum InjectionManager {
    /// The process-wide container, used wherever no other container is bound.
    public static var sharedContainer: InjectionContainer { Binding.processWide }

    /// Ends the process with `error`'s message, or, inside `verify()`, reports it and parks the thread.
    static func fail(_ error: InjectionError, file: StaticString, line: UInt) -> Never {
        let binding = Binding.current
        let container = binding?.container
        if let container, let verification = container.verification {
            verification.park(error, container: container, frame: binding?.frame)
        }
        let test = container?.testName ?? TaskBinding.current?.testName
        guard let test else { fatalError(error.description, file: file, line: line) }
        let sentence = error.description.hasSuffix(".") || error.description.hasSuffix(")") ? "" : "."
        var message = error.description + sentence + " This happened in the test \(test)."
        if error.kind == .notRegistered {
            message += " Register a mock for it in the test, before it is resolved (as above), or in the " +
                "registrations the test starts with: .isolatedInjection(startingWith:)."
        }
        fatalError(message, file: file, line: line)
    }

    // MARK: - Diagnostics handler

    /// The handler, in a struct: a closure held directly in the lock's generic state is re-wrapped by each
    /// access in an unspecialized build.
    private static let handler = LockedState(Unchecked<@Sendable (String) -> Void>({ line in
        #if DEBUG
        _injection_write_stderr(line + "\n")
        #endif
    }))

    /// Where the library reports mistakes that are not errors: one line per finding, starting with
    /// `Injection:`.
    ///
    /// ```swift
    /// InjectionManager.diagnosticsHandler = { line in logger.warning("\(line)") }
    /// ```
    /// Today it reports registering a type again while cached instances still hold the old one (a
    /// forgotten `resetCurrentContainer { }` at login), once per type and container, and each
    /// `.postConstruction` or `.implements` called on a stale ``InjectionRegistration`` (its type was
    /// registered again since), which does nothing. The call that found the mistake calls it
    /// synchronously. By default it prints the line to standard error in debug builds and does nothing in
    /// release builds. Tests can install a handler that records; a container's own
    /// ``InjectionContainer/diagnosticsHandler``, if set, gets that container's reports instead (a test's
    /// container, so parallel tests do not see each other's).
    public static var diagnosticsHandler: @Sendable (String) -> Void {
        get { handler.withLock { $0.value } }
        set {
            // The old handler goes after unlocking: what it captures may install a handler in its deinit.
            var replaced = Unchecked(newValue)
            handler.withLock { swap(&$0, &replaced) }
        }
    }

    /// The container the current task resolves from: the innermost one bound by
    /// ``withContainer(_:operation:)``, by a container's `resetCurrentContainer { }` block, or by the
    /// factory running (its container), else ``sharedContainer``.
    public static var currentContainer: InjectionContainer {
        Binding.current?.container ?? sharedContainer
    }

    // MARK: - Registration

    /// Registers the factory that builds `type` in the current container, replacing any earlier one.
    ///
    /// ```swift
    /// InjectionManager.register((any API).self) { LiveAPI() }
    /// InjectionManager.register(ViewModel.self, lifetime: .transient) { ViewModel(api: Inject()) }
    /// ```
    /// See ``InjectionContainer/register(_:lifetime:file:factory:postConstruction:)-(Value.Type,_,_,_,_)``.
    @discardableResult public static func register<Value>(
        _ type: Value.Type, lifetime: InjectionLifetime? = nil, file: StaticString = #fileID,
        factory: @escaping @Sendable () throws -> Value, postConstruction: (@Sendable (Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Value> {
        currentContainer.register(type, lifetime: lifetime, file: file, factory: factory, postConstruction: postConstruction)
    }

    /// Registers the factory for the typed key `Key` in the current container.
    ///
    /// ```swift
    /// enum CacheDatabase: InjectionKey { typealias Value = any Database }
    /// InjectionManager.register(CacheDatabase.self, lifetime: .singleton) { SQLiteDatabase(path: "cache.db") }
    /// ```
    /// See ``InjectionKey``.
    @discardableResult public static func register<Key: InjectionKey>(
        _ key: Key.Type, lifetime: InjectionLifetime? = nil, file: StaticString = #fileID,
        factory: @escaping @Sendable () throws -> Key.Value,
        postConstruction: (@Sendable (Key.Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Key.Value> {
        currentContainer.register(key, lifetime: lifetime, file: file, factory: factory, postConstruction: postConstruction)
    }

    /// Registers an instance made already in the current container, shared as a `.singleton`.
    ///
    /// ```swift
    /// InjectionManager.register(Config.self, instance: Config(contentsOf: url))
    /// ```
    /// See ``InjectionContainer/register(_:instance:file:)-(Value.Type,_,_)``.
    @discardableResult @_disfavoredOverload  // A trailing closure is a factory, even where it converts to `Value`.
    public static func register<Value>(
        _ type: Value.Type, instance: sending Value, file: StaticString = #fileID
    ) -> InjectionRegistration<Value> { currentContainer.register(type, instance: instance, file: file) }

    /// Registers an instance made already for the typed key `Key` in the current container.
    @discardableResult @_disfavoredOverload  // A trailing closure is a factory, even where it converts to `Value`.
    public static func register<Key: InjectionKey>(
        _ key: Key.Type, instance: sending Key.Value, file: StaticString = #fileID
    ) -> InjectionRegistration<Key.Value> { currentContainer.register(key, instance: instance, file: file) }

    /// Removes the registration of `type` and its cached instance from the current container.
    public static func unregister<Value>(_ type: Value.Type) { currentContainer.unregister(type) }

    /// Removes the registration of the typed key `Key` from ``currentContainer``, and its cached instance.
    ///
    /// For a class that is both an ``InjectionKey`` and a registered type, this removes the key's registration.
    public static func unregister<Key: InjectionKey>(_ key: Key.Type) { currentContainer.unregister(key) }

    /// Removes every registration and cached instance of the current container, singletons included.
    ///
    /// ```swift
    /// InjectionManager.removeAll()
    /// ```
    /// See ``InjectionContainer/removeAll()``.
    public static func removeAll() { currentContainer.removeAll() }

    /// Whether `type` is registered in the current container.
    public static func isRegistered<Value>(_ type: Value.Type) -> Bool { currentContainer.isRegistered(type) }

    /// Whether a factory for the typed key `Key` is registered in ``currentContainer``.
    ///
    /// For a class that is both an ``InjectionKey`` and a registered type, this asks about the key.
    public static func isRegistered<Key: InjectionKey>(_ key: Key.Type) -> Bool { currentContainer.isRegistered(key) }

    // MARK: - Resolution

    /// Returns the instance registered for `type`; throws ``InjectionError`` instead of trapping.
    ///
    /// ```swift
    /// let api = try InjectionManager.resolve((any API).self)
    /// InjectionManager.register((any Store).self) { try LiveStore(api: InjectionManager.resolve()) }
    /// ```
    /// Factories that resolve their dependencies with `try` let a failure deep in the graph reach
    /// the caller with the whole chain. See ``InjectionContainer/resolve(_:isolation:)-(Value.Type,_)``.
    public static func resolve<Value>(
        _ type: Value.Type = Value.self, isolation: isolated (any Actor)? = #isolation
    ) throws(InjectionError) -> Value {
        try InjectionContainer.resolve(AnyType(type), as: Value.self, in: nil, caller: isolation)
    }

    /// Returns the instance registered for the typed key `Key`; throws instead of trapping.
    public static func resolve<Key: InjectionKey>(
        _ key: Key.Type, isolation: isolated (any Actor)? = #isolation
    ) throws(InjectionError) -> Key.Value {
        try InjectionContainer.resolve(AnyType(key: key), as: Key.Value.self, in: nil, caller: isolation)
    }

    // MARK: - Scope

    /// Evicts every `.scoped` instance of the current container; registrations and singletons stay.
    ///
    /// See ``InjectionContainer/reset()``.
    public static func resetCurrentContainer() { currentContainer.reset() }

    /// Resets the current container and applies the registrations made in `body` as one atomic step.
    ///
    /// ```swift
    /// InjectionManager.resetCurrentContainer {
    ///     InjectionManager.register(UserSession.self) { UserSession(user: newUser) }
    /// }
    /// ```
    /// See ``InjectionContainer/reset(_:)``.
    public static func resetCurrentContainer<Failure: Error>(_ body: () throws(Failure) -> Void) throws(Failure) {
        try currentContainer.reset(body)
    }

    // MARK: - Diagnostics

    /// Resolves every registration of the current container in a throwaway copy; throws one error
    /// listing every missing registration, cycle and failing factory.
    ///
    /// ```swift
    /// try InjectionManager.verify()
    /// ```
    /// See ``InjectionContainer/verify()``.
    public static func verify() throws(InjectionError) { try currentContainer.verify() }

    /// Verifies the current container's graph, where the types in `later` are registered after launch (at
    /// login, for example); see ``InjectionContainer/verify(registeredLater:)``.
    ///
    /// ```swift
    /// try InjectionManager.verify(registeredLater: [UserSession.self])
    /// ```
    public static func verify(registeredLater later: [Any.Type]) throws(InjectionError) {
        try currentContainer.verify(registeredLater: later)
    }

    /// The current container's registered types and the "A needs B" edges seen so far.
    ///
    /// See ``InjectionContainer/dependencyGraph()``.
    public static func dependencyGraph() -> InjectionGraph { currentContainer.dependencyGraph() }

    /// The types of evicted instances that are still alive after their scope ended: a leak check.
    ///
    /// ```swift
    /// InjectionManager.resetCurrentContainer()                  // logout
    /// #expect(InjectionManager.liveInstancesFromPreviousScopes().isEmpty)
    /// ```
    /// See ``InjectionContainer/liveInstancesFromPreviousScopes()``.
    public static func liveInstancesFromPreviousScopes() -> [String] {
        currentContainer.liveInstancesFromPreviousScopes()
    }

    // MARK: - Concurrency

    /// Registers a factory isolated to the main actor, for `@MainActor` types, in the current container.
    ///
    /// ```swift
    /// InjectionManager.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
    /// ```
    /// See ``InjectionContainer/register(_:lifetime:isolation:file:factory:postConstruction:)-(Value.Type,_,_,_,_,_)``.
    @discardableResult public static func register<Value>(
        _ type: Value.Type, lifetime: InjectionLifetime? = nil, isolation: MainActor, file: StaticString = #fileID,
        factory: @escaping @MainActor @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Value> {
        currentContainer.register(type, lifetime: lifetime, isolation: isolation, file: file, factory: factory, postConstruction: postConstruction)
    }

    /// Registers an `async` factory in the current container.
    ///
    /// ```swift
    /// InjectionManager.registerAsync((any Store).self) { await LiveStore.open() }
    /// ```
    /// See ``InjectionContainer/registerAsync(_:lifetime:file:factory:)-(Value.Type,_,_,_)``.
    @discardableResult public static func registerAsync<Value>(
        _ type: Value.Type, lifetime: InjectionLifetime? = nil, file: StaticString = #fileID,
        factory: @escaping @Sendable () async throws -> Value
    ) -> InjectionRegistration<Value> {
        currentContainer.registerAsync(type, lifetime: lifetime, file: file, factory: factory)
    }

    /// Registers a main-actor factory for the typed key `Key` in the current container.
    @discardableResult public static func register<Key: InjectionKey>(
        _ key: Key.Type, lifetime: InjectionLifetime? = nil, isolation: MainActor, file: StaticString = #fileID,
        factory: @escaping @MainActor @Sendable () throws -> Key.Value,
        postConstruction: (@Sendable (Key.Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Key.Value> {
        currentContainer.register(key, lifetime: lifetime, isolation: isolation, file: file, factory: factory, postConstruction: postConstruction)
    }

    /// Registers an `async` factory for the typed key `Key` in the current container.
    @discardableResult public static func registerAsync<Key: InjectionKey>(
        _ key: Key.Type, lifetime: InjectionLifetime? = nil, file: StaticString = #fileID,
        factory: @escaping @Sendable () async throws -> Key.Value
    ) -> InjectionRegistration<Key.Value> {
        currentContainer.registerAsync(key, lifetime: lifetime, file: file, factory: factory)
    }

    /// Returns the instance registered for `type`, running async factories and hopping to the main
    /// actor for main-actor ones.
    ///
    /// ```swift
    /// let store: any Store = try await InjectionManager.resolveAsync()
    /// ```
    /// See ``InjectionContainer/resolveAsync(_:)-(Value.Type)``.
    public static func resolveAsync<Value>(_ type: Value.Type = Value.self) async throws(InjectionError) -> Value {
        try await currentContainer.resolveAsync(type)
    }

    /// Returns the instance registered for the typed key `Key`, running async factories.
    public static func resolveAsync<Key: InjectionKey>(_ key: Key.Type) async throws(InjectionError) -> Key.Value {
        try await currentContainer.resolveAsync(key)
    }

    /// Builds `type` now, so later `Inject()` calls find it cached: warm async factories at launch.
    ///
    /// ```swift
    /// try await InjectionManager.prepare((any Store).self)
    /// let store: any Store = Inject()   // the prepared instance
    /// ```
    public static func prepare<Value>(_ type: Value.Type) async throws(InjectionError) {
        try await currentContainer.prepare(type)
    }

    /// Builds the instance for the typed key `Key` now; see ``prepare(_:)-(Value.Type)``.
    public static func prepare<Key: InjectionKey>(_ key: Key.Type) async throws(InjectionError) {
        try await currentContainer.prepare(key)
    }
}
