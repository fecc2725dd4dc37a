/// What one `register` call describes: the key, the lifetime, the factory and its options.
///
/// Immutable, so any thread reads it without a lock, and a copy of the container shares it. What the
/// container builds with it (the cached instance, a build in flight) lives in ``ContainerState``, under
/// the container's lock. A new object per `register`: identity tells a build whether its registration
/// is still the current one.
///
/// Not generic: the factory is wrapped in a closure that boxes its value (``make``), so registering a
/// type makes no metadata for it. (Kept as it was given, in an `any Sendable`, the factory's function type
/// would need metadata of its own per registered type, and a thunk: the launch targets failed with it.)
package final class Registration: Sendable {
    typealias MakeAsync = @Sendable () async throws -> Box
    typealias PostConstruct = @Sendable (Box) throws -> Void

    /// Where the factory may run.
    enum Kind {
        /// Wherever it is resolved.
        case plain
        /// Only on the main actor: a synchronous resolve elsewhere fails, `resolveAsync` hops there.
        case mainActor
        /// Only in `resolveAsync` and `prepare`.
        case async
    }

    /// What few registrations have: an async factory, or an `implements` alias's async form (what
    /// `resolveAsync` runs); the `postConstruction` steps, run on each new instance; an alias's primary,
    /// the type it resolves.
    /// The steps are a list, run in a loop: a chain of closures would recurse once per step.
    typealias Options = (makeAsync: MakeAsync?, postConstruct: [PostConstruct], primary: AnyType?)

    /// The key: the registered type, an `InjectionKey` type, or a builder model type.
    package let type: AnyType
    /// The file that registered (named for a `private` type, whose name alone is ambiguous).
    let file: StaticString
    // The three one-byte fields follow `file`, whose last word has room for them.
    let lifetime: InjectionLifetime
    let kind: Kind
    /// Whether the container tells its instances they are evicted and tracks them for leaks: not an
    /// instance the caller supplied (`register(_:instance:)`), nor a builder's closure.
    let ownsInstances: Bool
    /// Runs the synchronous factory (a main-actor one only where a claim saw a main-actor caller) and boxes
    /// its value.
    let make: @Sendable () throws -> Box
    let options: Options

    private init<Value>(
        _ type: AnyType, _ lifetime: InjectionLifetime, _ kind: Kind, file: StaticString,
        ownsInstances: Bool = true, factory: @escaping @Sendable () throws -> Value, options: Options
    ) {
        (self.type, self.file, self.lifetime, self.kind) = (type, file, lifetime, kind)
        (self.ownsInstances, self.options) = (ownsInstances, options)
        make = { Box.make(try factory()) }
    }

    /// `other` with `options` instead of its own.
    private init(copying other: Registration, options: Options) {
        (type, file, lifetime, kind) = (other.type, other.file, other.lifetime, other.kind)
        (ownsInstances, make) = (other.ownsInstances, other.make)
        self.options = options
    }

    /// A synchronous factory that runs wherever it is resolved.
    package convenience init<Value>(
        _ type: AnyType, lifetime: InjectionLifetime, file: StaticString,
        factory: @escaping @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)? = nil, ownsInstances: Bool = true
    ) {
        Self.refuseUnreliableLayout(Value.self)
        self.init(
            type, lifetime, .plain, file: file, ownsInstances: ownsInstances,
            factory: factory, options: Self.options(postConstruction))
    }

    /// An `implements` alias of `primary`: a transient whose factory resolves `primary` (whatever is
    /// registered for it when it runs) and upcasts, and whose async form, which `resolveAsync` runs, does
    /// the same with `resolveAsync`. Either way the alias follows its primary's rules.
    convenience init<Value>(
        alias type: AnyType, of primary: AnyType, file: StaticString, factory: @escaping @Sendable () throws -> Value,
        asyncForm: @escaping @Sendable () async throws -> Value
    ) {
        self.init(
            type, .transient, .plain, file: file, factory: factory,
            options: ({ Box.make(try await asyncForm()) }, [], primary))
    }

    /// A synchronous factory isolated to the main actor: it runs only where a claim saw a main-actor caller.
    package convenience init<Value>(
        _ type: AnyType, lifetime: InjectionLifetime, file: StaticString,
        mainActorFactory: @escaping @MainActor @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)? = nil
    ) {
        Self.refuseUnreliableLayout(Value.self)
        // The value is made and returned on the main actor; nothing crosses an isolation boundary.
        self.init(type, lifetime, .mainActor, file: file, factory: {
            try MainActor.assumeIsolated { Unchecked(try mainActorFactory()) }.value
        }, options: Self.options(postConstruction))
    }

    /// An async factory: only `resolveAsync` and `prepare` run it.
    package convenience init<Value>(
        _ type: AnyType, lifetime: InjectionLifetime, file: StaticString,
        asyncFactory: @escaping @Sendable () async throws -> Value
    ) {
        Self.refuseUnreliableLayout(Value.self)
        self.init(
            type, lifetime, .async, file: file,
            factory: { () throws -> Value in preconditionFailure("Injection: an async factory run synchronously") },
            options: ({ Box.make(try await asyncFactory()) }, [], nil))
    }

    /// The same registration with `postConstruction` run after the steps it has.
    func adding<Value>(postConstruction: @escaping @Sendable (Value) throws -> Void) -> Registration {
        let step = Self.boxed(postConstruction)
        let steps = options.postConstruct + [ownsInstances ? step : Self.once(step)]
        return Registration(copying: self, options: (options.makeAsync, steps, options.primary))
    }

    /// `step`, for a supplied instance (`register(_:instance:)`): one object, which the container it was
    /// registered in and every copy of it hand out. So it runs once for the instance, in whichever
    /// container resolves it first, and again only if it failed. A resolve that finds it running in
    /// another container goes on without waiting, as one on another thread of the same container would
    /// (`postConstruction` is not exclusive). The step runs outside the lock.
    private static func once(_ step: @escaping PostConstruct) -> PostConstruct {
        let progress = LockedState((isRunning: false, isDone: false))
        return { box in
            let runsHere = progress.withLock { progress in
                guard !progress.isRunning && !progress.isDone else { return false }
                progress.isRunning = true
                return true
            }
            guard runsHere else { return }
            var succeeded = false
            defer { progress.withLock { $0 = (false, succeeded) } }
            try step(box)
            succeeded = true
        }
    }

    /// The options of a registration whose only option is `postConstruction`, if any. (Not `Optional.map`,
    /// which would make the metadata of the closure's type for every registered type.)
    private static func options<Value>(_ postConstruction: (@Sendable (Value) throws -> Void)?) -> Options {
        guard let postConstruction else { return (nil, [], nil) }
        return (nil, [boxed(postConstruction)], nil)
    }

    private static func boxed<Value>(_ closure: @escaping @Sendable (Value) throws -> Void) -> PostConstruct {
        { box in try closure(box.value(as: Value.self)) }
    }
}
