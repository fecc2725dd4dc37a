// MARK: - Main-actor and async factories

extension InjectionContainer {
    /// Registers a factory isolated to the main actor, for `@MainActor` types.
    ///
    /// ```swift
    /// container.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
    ///
    /// @MainActor final class ProfileScreen {
    ///     let viewModel: ProfileViewModel = Inject()    // built right here, on the main actor
    /// }
    /// ```
    /// A synchronous resolve runs the factory on the main thread, with no `assumeIsolated` tricks in
    /// your code. Off the main actor, a synchronous resolve that has to build the instance fails with
    /// ``InjectionError/Kind/wrongIsolation`` (`Inject()` traps with a message naming the type and the
    /// actor) instead of crashing inside the factory; ``resolveAsync(_:)-(Value.Type)`` hops to the main actor.
    /// Once built, the instance is returned from anywhere: a `@MainActor` class is `Sendable`.
    @discardableResult public func register<Value>(
        _ type: Value.Type, lifetime: InjectionLifetime? = nil, isolation: MainActor, file: StaticString = #fileID,
        factory: @escaping @MainActor @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Value> {
        registered(Registration(AnyType(exactly: type), lifetime: lifetime ?? defaultLifetime, file: file,
            mainActorFactory: factory, postConstruction: postConstruction))
    }

    /// Registers an `async` factory: built by ``resolveAsync(_:)-(Value.Type)`` or ``prepare(_:)-(Value.Type)``.
    ///
    /// ```swift
    /// container.registerAsync((any Store).self) { await LiveStore.open() }
    /// let store = try await container.resolveAsync((any Store).self)
    /// ```
    /// A factory that is async only to reach the main actor (`{ await MainActor.run { Router() } }`) is a
    /// main-actor factory: register it with `isolation: MainActor.shared`, and `Inject()` on the main actor
    /// builds it.
    /// A `.scoped` or `.singleton` instance is built exactly once per scope however many tasks await
    /// it. The construction runs in a task of its own, so cancelling a task that waits for it never
    /// cancels it for the others. A reset during the construction keeps its result out of the new
    /// scope. A synchronous resolve (`Inject()`) returns the instance once it is built and reports
    /// ``InjectionError/Kind/asyncFactory`` before: warm such types at launch with ``prepare(_:)-(Value.Type)``.
    /// `verify()` does not run async factories.
    @discardableResult public func registerAsync<Value>(
        _ type: Value.Type, lifetime: InjectionLifetime? = nil, file: StaticString = #fileID,
        factory: @escaping @Sendable () async throws -> Value
    ) -> InjectionRegistration<Value> {
        registered(Registration(
            AnyType(exactly: type), lifetime: lifetime ?? defaultLifetime, file: file, asyncFactory: factory))
    }

    /// Registers a main-actor factory for the typed key `Key`; see ``register(_:lifetime:isolation:file:factory:postConstruction:)-(Value.Type,_,_,_,_,_)``.
    @discardableResult public func register<Key: InjectionKey>(
        _ key: Key.Type, lifetime: InjectionLifetime? = nil, isolation: MainActor, file: StaticString = #fileID,
        factory: @escaping @MainActor @Sendable () throws -> Key.Value,
        postConstruction: (@Sendable (Key.Value) throws -> Void)? = nil
    ) -> InjectionRegistration<Key.Value> {
        registered(Registration(AnyType(key: key), lifetime: lifetime ?? defaultLifetime, file: file,
            mainActorFactory: factory, postConstruction: postConstruction))
    }

    /// Registers an `async` factory for the typed key `Key`; see ``registerAsync(_:lifetime:file:factory:)-(Value.Type,_,_,_)``.
    @discardableResult public func registerAsync<Key: InjectionKey>(
        _ key: Key.Type, lifetime: InjectionLifetime? = nil, file: StaticString = #fileID,
        factory: @escaping @Sendable () async throws -> Key.Value
    ) -> InjectionRegistration<Key.Value> {
        registered(Registration(
            AnyType(key: key), lifetime: lifetime ?? defaultLifetime, file: file, asyncFactory: factory))
    }

    /// Returns the instance registered for `type`, running async factories and hopping to the main
    /// actor for main-actor ones; throws instead of trapping.
    ///
    /// ```swift
    /// let store = try await container.resolveAsync((any Store).self)
    /// ```
    /// It works for every registration, sync ones included. (It is not an `async` overload of
    /// `resolve`, so existing `try resolve(...)` calls in async code keep compiling without `await`.)
    public func resolveAsync<Value>(_ type: Value.Type = Value.self) async throws(InjectionError) -> Value {
        try await asyncResolve(AnyType(type)).value(as: Value.self)
    }

    /// Returns the instance registered for the typed key `Key`; see ``resolveAsync(_:)-(Value.Type)``.
    public func resolveAsync<Key: InjectionKey>(_ key: Key.Type) async throws(InjectionError) -> Key.Value {
        try await asyncResolve(AnyType(key: key)).value(as: Key.Value.self)
    }

    /// Builds `type` now, so later synchronous resolves (`Inject()`) find it cached.
    ///
    /// ```swift
    /// // At launch:
    /// try await InjectionManager.prepare((any Store).self)
    /// ```
    /// A reset evicts a `.scoped` instance again; prepare it again after login. A `.transient` instance is
    /// never kept, and a `.weak` one only while something holds it, so preparing those does not make a
    /// synchronous resolve of an async factory work: resolve them with `resolveAsync`.
    public func prepare<Value>(_ type: Value.Type) async throws(InjectionError) {
        _ = try await asyncResolve(AnyType(type))
    }

    /// Builds the instance for the typed key `Key` now; see ``prepare(_:)-(Value.Type)``.
    public func prepare<Key: InjectionKey>(_ key: Key.Type) async throws(InjectionError) {
        _ = try await asyncResolve(AnyType(key: key))
    }
}
