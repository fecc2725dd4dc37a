/// A registry of factories plus the instances of one resettable scope.
///
/// Most code never names a container: ``InjectionManager`` and ``Inject(_:file:line:)`` act on
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

    private let lock = _Lock()
    private var slots: [ObjectIdentifier: _Slot] = [:]
    /// Bumped by every reset; a scoped build that started in an older scope is never cached.
    private var scope: UInt64 = 0
    /// Whether some thread's `_ThreadState` may hold an entry of this container.
    private var isInThreadCaches = false

    /// Creates an empty container.
    public init() {}

    deinit {
        // Thread caches key entries by this container's address, which a new container may reuse.
        if isInThreadCaches { _ = _ThreadState.evict(container: ObjectIdentifier(self)) }
    }

    /// Creates a container with the same registrations as `other` and none of its instances.
    ///
    /// ```swift
    /// let copy = InjectionContainer(copying: InjectionManager.currentContainer)
    /// ```
    /// Registering in, resolving from or resetting either container never affects the other.
    /// Singletons are rebuilt in the copy on first resolve.
    public init(copying other: InjectionContainer) {
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
    /// ```
    /// - Parameters:
    ///   - type: The type resolved by `Inject()` and ``resolve(_:)``, usually a protocol.
    ///   - lifetime: How long a built instance is kept. Defaults to ``InjectionLifetime/scoped``.
    ///   - factory: Builds an instance; may throw, which ``resolve(_:)`` reports as
    ///     ``InjectionError/Kind/factoryFailed`` without caching anything.
    public func register<Value>(
        _ type: Value.Type,
        lifetime: InjectionLifetime = .scoped,
        factory: @escaping @Sendable () throws -> Value
    ) {
        _register(ObjectIdentifier(type), _Registration(lifetime: lifetime, typeName: _TypeName.of(type), factory: factory))
    }

    /// Removes the registration of `type` and its cached instance.
    ///
    /// A resolve that is building `type` right now still returns its instance but does not cache it.
    public func unregister<Value>(_ type: Value.Type) {
        let key = ObjectIdentifier(type)
        if let transaction = openTransaction(), transaction.record(.unregister(key)) { return }
        let removed = lock.withLock { () -> [AnyObject] in
            let removed = slots.removeValue(forKey: key)
            if removed?.build != nil { lock.broadcast() }
            return evictFromThreadCachesLocked() + (removed.map { [$0] } ?? [])
        }
        _ = removed  // Released here, outside the lock: deinit is user code.
    }

    /// Whether a factory is registered for `type`.
    public func isRegistered<Value>(_ type: Value.Type) -> Bool {
        let key = ObjectIdentifier(type)
        if let transaction = openTransaction(), let decided = transaction.registration(for: key) { return decided }
        return lock.withLock { slots[key] != nil }
    }

    // MARK: - Resolution

    /// Returns the instance registered for `type`, building it if needed; throws instead of trapping.
    ///
    /// ```swift
    /// let api = try container.resolve(API.self)
    /// ```
    /// - Throws: ``InjectionError`` when `type` is not registered, its factory (or the factory of a
    ///   dependency resolved with `try`) throws, or resolving it would need itself.
    public func resolve<Value>(_ type: Value.Type = Value.self) throws(InjectionError) -> Value {
        try _resolve(type, as: Value.self, context: _Context.active)
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
        let evicted = lock.withLock { resetLocked() }
        _ = evicted  // Released here, outside the lock.
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
        if let transaction = openTransaction(), transaction.record(.reset) {
            try body()  // Nested: the outer block commits everything.
            return
        }
        let transaction = _Transaction(container: self)
        let outer = _Context.active
        let context = _Context(container: self, frame: outer?.frame, transaction: transaction)
        do {
            try _Context.withSyncScope(context, body)
        } catch {
            _ = transaction.commit()
            throw error
        }
        let operations = transaction.commit()
        let released = lock.withLock { () -> [AnyObject] in
            var released: [AnyObject] = []
            for operation in operations {
                switch operation {
                case .reset:
                    released += resetLocked()
                case .register(let key, let registration):
                    if let old = slots.updateValue(_Slot(registration), forKey: key) { released.append(old) }
                case .unregister(let key):
                    if let old = slots.removeValue(forKey: key) { released.append(old) }
                }
            }
            lock.broadcast()
            return released
        }
        _ = released  // Released here, outside the lock.
    }

    // MARK: - Internals

    func _register(_ key: ObjectIdentifier, _ registration: _AnyRegistration) {
        if let transaction = openTransaction(), transaction.record(.register(key, registration)) { return }
        let replaced = lock.withLock { () -> [AnyObject] in
            let replaced = slots.updateValue(_Slot(registration), forKey: key)
            if replaced?.build != nil { lock.broadcast() }
            return evictFromThreadCachesLocked() + (replaced.map { [$0] } ?? [])
        }
        _ = replaced  // Released here, outside the lock.
    }

    /// Removes this container's entries from every thread's cache; returns them for release after unlocking.
    private func evictFromThreadCachesLocked() -> [AnyObject] {
        guard isInThreadCaches else { return [] }
        isInThreadCaches = false
        return _ThreadState.evict(container: ObjectIdentifier(self))
    }

    /// Copies `instance` into this thread's cache, so the next resolve of `key` here takes no shared lock.
    private func cacheInThreadLocked<Value>(_ instance: _Box, as _: Value.Type, key: ObjectIdentifier) {
        isInThreadCaches = true
        _ThreadState.currentOrNew.insert(container: ObjectIdentifier(self), key: key, box: instance.copy(as: Value.self))
    }

    /// The open `resetCurrentContainer { }` of this container in the current task, if any.
    private func openTransaction() -> _Transaction? {
        guard let transaction = _Context.active?.transaction, transaction.container === self else { return nil }
        return transaction
    }

    /// Evicts scoped instances and abandons scoped builds; returns what to release after unlocking.
    private func resetLocked() -> [AnyObject] {
        scope &+= 1
        var evicted = evictFromThreadCachesLocked()
        for slot in slots.values where slot.registration.lifetime == .scoped {
            if let instance = slot.cached { evicted.append(instance) }
            slot.cached = nil
            slot.build = nil
        }
        lock.broadcast()
        return evicted
    }
}

// MARK: - The resolution algorithm

extension InjectionContainer {
    private enum Step {
        case hit(_Box)
        case wait(_Build)
        case run(_Slot, _AnyRegistration, _Build?)
    }

    /// Resolves `requested` (a type or an `InjectionKey`) as a `Value`.
    ///
    /// A cached hit takes the lock once. A miss claims the slot with a `_Build`, runs the factory
    /// outside the lock with a frame pushed on the chain, and caches the result only if the slot and
    /// scope are still the ones the build started in. Other resolutions of the same key wait for the
    /// build, unless waiting would close a cycle, which is reported instead.
    func _resolve<Value>(_ requested: Any.Type, as _: Value.Type, context: _Context?) throws(InjectionError) -> Value {
        let key = ObjectIdentifier(requested)
        let parent = context?.frame
        if let transaction = context?.transaction, transaction.container === self, transaction.isOpen {
            throw .resolvedDuringReset(_TypeName.of(requested), chain: (parent?.chain ?? []) + [_TypeName.of(requested)])
        }
        let containerID = ObjectIdentifier(self)
        if let box = _ThreadState.current?._withUnsafeGuaranteedRef({ $0.lookup(container: containerID, key: key) }) {
            return box.value(as: Value.self)
        }
        let resolver = parent?.resolver ?? _Resolver()
        while true {
            let step = try lock.withLock { () throws(InjectionError) -> Step in
                guard let slot = slots[key] else {
                    let name = _TypeName.of(requested)
                    throw .notRegistered(name, chain: (parent?.chain ?? []) + [name])
                }
                if let instance = slot.cached {
                    cacheInThreadLocked(instance, as: Value.self, key: key)
                    return .hit(instance)
                }
                let registration = slot.registration
                if let path = parent?.chain(from: key, in: containerID) {
                    throw .cycle(registration.typeName, path: path + [registration.typeName])
                }
                if registration.lifetime == .transient { return .run(slot, registration, nil) }
                if let build = slot.build { return .wait(build) }
                let build = _Build(owner: resolver, container: containerID, key: key, typeName: registration.typeName, scope: scope)
                slot.build = build
                return .run(slot, registration, build)
            }
            switch step {
            case .hit(let instance):
                return instance.value(as: Value.self)
            case .wait(let build):
                try wait(for: build, key: key, resolver: resolver, frame: parent)
            case .run(let slot, let registration, let build):
                let instance = try run(registration, for: key, in: slot, build: build, parent: parent, resolver: resolver)
                return instance.value(as: Value.self)
            }
        }
    }

    /// Blocks until `build` finishes or is abandoned, unless waiting would deadlock.
    private func wait(for build: _Build, key: ObjectIdentifier, resolver: _Resolver, frame: _Frame?) throws(InjectionError) {
        if let path = _WaitGraph.beginWaiting(resolver, frame: frame, for: build) {
            throw .cycle(build.typeName, path: path)
        }
        defer { _WaitGraph.endWaiting(resolver) }
        lock.withLock {
            while slots[key]?.build === build { lock.wait() }
        }
    }

    /// Runs the factory outside the lock, then caches the instance if the build is still current.
    private func run(
        _ registration: _AnyRegistration, for key: ObjectIdentifier, in slot: _Slot, build: _Build?,
        parent: _Frame?, resolver: _Resolver
    ) throws(InjectionError) -> _Box {
        let frame = _Frame(container: ObjectIdentifier(self), key: key, typeName: registration.typeName, parent: parent, resolver: resolver)
        let outcome: Result<_Box, InjectionError>
        do {
            let instance = try _Context.withSyncScope(_Context(container: self, frame: frame, transaction: nil)) {
                () throws(any Error) -> _Box in try registration.makeBox()
            }
            outcome = .success(instance)
        } catch let error as InjectionError {
            outcome = .failure(error)
        } catch {
            outcome = .failure(.factoryFailed(registration.typeName, chain: frame.chain, underlying: error))
        }
        if let build {
            lock.withLock {
                if slot.build === build { slot.build = nil }
                let isCurrent = slots[key] === slot && (registration.lifetime != .scoped || build.scope == scope)
                if case .success(let instance) = outcome, isCurrent { slot.cached = instance }
                lock.broadcast()
            }
        }
        return try outcome.get()
    }
}
