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
    /// actor) instead of crashing inside the factory; ``resolveAsync(_:)`` hops to the main actor.
    /// Once built, the instance is returned from anywhere: a `@MainActor` class is `Sendable`.
    public func register<Value>(
        _ type: Value.Type,
        lifetime: InjectionLifetime = .scoped,
        isolation: MainActor,
        file: StaticString = #fileID,
        factory: @escaping @MainActor @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)? = nil
    ) {
        _register(_Registration(lifetime: lifetime, type: _AnyType(type), mainActorFactory: factory, postConstruction: postConstruction), file: file)
    }

    /// Registers an `async` factory: built by ``resolveAsync(_:)`` or ``prepare(_:)``.
    ///
    /// ```swift
    /// container.register(Store.self) { await LiveStore.open() }
    /// let store = try await container.resolveAsync(Store.self)
    /// ```
    /// A `.scoped` or `.singleton` instance is built exactly once per scope however many tasks await
    /// it. The construction runs in a task of its own, so cancelling a task that waits for it never
    /// cancels it for the others. A reset during the construction keeps its result out of the new
    /// scope. A synchronous resolve (`Inject()`) returns the instance once it is built and reports
    /// ``InjectionError/Kind/asyncFactory`` before: warm such types at launch with ``prepare(_:)``.
    /// `verify()` does not run async factories.
    public func register<Value>(
        _ type: Value.Type,
        lifetime: InjectionLifetime = .scoped,
        file: StaticString = #fileID,
        factory: @escaping @Sendable () async throws -> Value
    ) {
        _register(_Registration(lifetime: lifetime, type: _AnyType(type), asyncFactory: factory), file: file)
    }

    /// Registers a main-actor factory for the typed key `Key`; see ``register(_:lifetime:isolation:factory:postConstruction:)``.
    public func register<Key: InjectionKey>(
        _ key: Key.Type,
        lifetime: InjectionLifetime = .scoped,
        isolation: MainActor,
        file: StaticString = #fileID,
        factory: @escaping @MainActor @Sendable () throws -> Key.Value,
        postConstruction: (@Sendable (Key.Value) throws -> Void)? = nil
    ) {
        _register(_Registration(lifetime: lifetime, type: _AnyType(key: key), mainActorFactory: factory, postConstruction: postConstruction), file: file)
    }

    /// Registers an `async` factory for the typed key `Key`; see ``register(_:lifetime:factory:)``.
    public func register<Key: InjectionKey>(
        _ key: Key.Type,
        lifetime: InjectionLifetime = .scoped,
        file: StaticString = #fileID,
        factory: @escaping @Sendable () async throws -> Key.Value
    ) {
        _register(_Registration(lifetime: lifetime, type: _AnyType(key: key), asyncFactory: factory), file: file)
    }

    /// Returns the instance registered for `type`, running async factories and hopping to the main
    /// actor for main-actor ones; throws instead of trapping.
    ///
    /// ```swift
    /// let store = try await container.resolveAsync(Store.self)
    /// ```
    /// It works for every registration, sync ones included. (It is not an `async` overload of
    /// `resolve`, so existing `try resolve(...)` calls in async code keep compiling without `await`.)
    public func resolveAsync<Value>(_ type: Value.Type = Value.self) async throws(InjectionError) -> Value {
        try await _resolveBoxAsync(_AnyType(type)).value(as: Value.self)
    }

    /// Returns the instance registered for the typed key `Key`; see ``resolveAsync(_:)-(Value.Type)``.
    public func resolveAsync<Key: InjectionKey>(_ key: Key.Type) async throws(InjectionError) -> Key.Value {
        try await _resolveBoxAsync(_AnyType(key: key)).value(as: Key.Value.self)
    }

    /// Builds `type` now, so later synchronous resolves (`Inject()`) find it cached.
    ///
    /// ```swift
    /// // At launch:
    /// try await InjectionManager.prepare(Store.self)
    /// ```
    /// A reset evicts a `.scoped` instance again; prepare it again after login.
    public func prepare<Value>(_ type: Value.Type) async throws(InjectionError) {
        _ = try await _resolveBoxAsync(_AnyType(type))
    }

    /// Builds the instance for the typed key `Key` now; see ``prepare(_:)-(Value.Type)``.
    public func prepare<Key: InjectionKey>(_ key: Key.Type) async throws(InjectionError) {
        _ = try await _resolveBoxAsync(_AnyType(key: key))
    }

    /// The async slow path: like `_resolveBox`, but waiting tasks suspend instead of blocking a thread,
    /// async factories run in a task of their own, and main-actor types are resolved on the main actor.
    func _resolveBoxAsync(_ requested: _AnyType) async throws(InjectionError) -> _Box {
        let (parent, startsRoot) = _Context.parent
        if let transaction = openTransaction(), transaction.isOpen {
            // A task started inside `resetCurrentContainer { }` that resolves while the block is open.
            throw .resolvedDuringReset(requested, chain: (parent?.chain ?? []) + [requested], names: typeNames)
        }
        if let parent, parent.container == ObjectIdentifier(self) {
            // Async factories may resolve from several child tasks at once: record under the lock.
            let edge = InjectionGraph._Edge(from: parent.type, to: requested)
            graphLock.withLock { _ = edges.insert(edge) }
        }
        let key = requested.id
        while true {
            switch try step(
                for: requested, parent: parent, startsRoot: startsRoot, cachesInThread: false, isAsync: true, onMainActor: { false })
            {
            case .hit(let instance):
                return instance
            case .hopToMainActor:
                // Build main-actor types on the main actor, start to finish, so a build of one is always
                // running on the main thread and a main-thread resolve never blocks waiting for a hop.
                do {
                    return try await MainActor.run {
                        try self._resolveBox(requested, parent: parent, startsRoot: true, cachesInThread: false, onMainActor: true)
                    }
                } catch {
                    throw error as! InjectionError  // `MainActor.run` rethrows untyped; `_resolveBox` throws only this.
                }
            case .wait(let build):
                let waiter = startsRoot ? nil : parent
                if let waiter, let path = _WaitGraph.beginWaiting(waiter, for: build) {
                    throw .cycle(build.type, path: path, names: typeNames)
                }
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let isFinished = lock.withLock { () -> Bool in
                        if !build.isFinished { build.asyncWaiters.append(continuation) }
                        return build.isFinished
                    }
                    if isFinished { continuation.resume() }
                }
                if let waiter { _WaitGraph.endWaiting(waiter) }
            case .run(let slot, let registration, let frame, let build):
                var outcome: Result<_Box, InjectionError>
                if registration.isAsync {
                    let context = _Context(container: self, frame: frame, transaction: _Context.transaction)
                    // Its own task: cancelling one waiter must not cancel what the others wait for.
                    let construction = Task { [self] () async -> Result<_Box, InjectionError> in
                        frame.ownerTask = _currentTaskID()
                        return await _Context.$current.withValue(context) {
                            do {
                                return .success(try await registration.makeBoxAsync())
                            } catch let error as InjectionError {
                                return .failure(error)
                            } catch {
                                return .failure(.factoryFailed(registration.type, chain: frame.chain, underlying: error, names: typeNames))
                            }
                        }
                    }
                    outcome = await construction.value
                } else {
                    outcome = runUserCode(registration, frame: frame) { try registration.makeBox() }
                }
                finish(&outcome, registration, key: key, slot: slot, frame: frame, build: build, defersPostConstruction: false)
                return try outcome.get()
            }
        }
    }
}
