// MARK: - Builders: opaque construction from a parameter model

/// A model that carries the parameters for an instance whose implementation the caller never sees.
///
/// The model lives in an API module; the implementation lives in a module only the composition root
/// imports, and registers how to build the result from the model.
///
/// ```swift
/// // API module
/// public protocol ProfileScreen: AnyObject { var userID: String { get } }
/// public struct ProfileScreenBuilder: Builder {
///     public typealias BuildResult = any ProfileScreen
///     public let userID: String
///     public init(userID: String) { self.userID = userID }
/// }
///
/// // Composition root
/// InjectionManager.register(ProfileScreenBuilder.self) { builder in ProfileScreenImpl(builder: builder) }
///
/// // Any module
/// let screen = ProfileScreenBuilder(userID: "42").build()
/// ```
/// A build always makes a new instance: builders have no lifetime. It runs in the current container,
/// so a test's isolated container can register a fake builder, and what the implementation injects is
/// part of the resolution chain, so cycles and error messages include the builder.
public protocol Builder {
    /// What ``build(isolation:file:line:)`` returns, usually an existential such as `any ProfileScreen`.
    associatedtype BuildResult
}

extension Builder {
    /// Builds the instance registered for this model type in the current container; traps with a
    /// message that names the model type and how to register it if it is not registered.
    ///
    /// ```swift
    /// let screen = ProfileScreenBuilder(userID: "42").build()   // any ProfileScreen
    /// ```
    /// Use ``InjectionManager/build(_:isolation:)`` to get an ``InjectionError`` instead of a trap.
    /// A main-actor builder is checked here at run time; make the model a ``MainActorBuilder`` to have
    /// the compiler check it.
    /// - Parameters:
    ///   - isolation: The caller's actor, filled in by the compiler: a main-actor builder runs only
    ///     from main-actor code.
    ///   - file: The file the trap reports (leave the default).
    ///   - line: The line the trap reports (leave the default).
    public func build(
        isolation: isolated (any Actor)? = #isolation, file: StaticString = #fileID, line: UInt = #line
    ) -> BuildResult {
        do {
            return try InjectionManager.currentContainer.build(self, caller: isolation)
        } catch { InjectionManager.fail(error, file: file, line: line) }
    }
}

/// A builder model whose implementation is main-actor: its ``build(file:line:)`` is `@MainActor`, so
/// the compiler rejects a build from code that is not on the main actor.
///
/// ```swift
/// // API module
/// @MainActor public protocol ProfileView: AnyObject { var userID: String { get } }
/// public struct ProfileVCBuilder: MainActorBuilder {
///     public typealias BuildResult = any ProfileView
///     public let userID: String
///     public init(userID: String) { self.userID = userID }
/// }
///
/// // Composition root
/// InjectionManager.register(ProfileVCBuilder.self, building: ProfileViewController.self)
///
/// @MainActor func showProfile() {
///     let controller = ProfileVCBuilder(userID: "42").build()   // compiles: main-actor code
/// }
/// func prefetch() {
///     _ = ProfileVCBuilder(userID: "42").build()
///     // error: call to main actor-isolated instance method 'build(file:line:)' in a synchronous
///     // nonisolated context
/// }
/// ```
/// A plain ``Builder`` checks the same rule only at run time: its `build()` traps off the main actor.
/// Async code writes `await model.build()`, which runs on the main actor. Code generic over ``Builder``,
/// ``InjectionManager/build(_:isolation:)`` and ``InjectionManager/buildAsync(_:)`` keep the run-time
/// check (a throw, or a hop), for code that must build from anywhere.
public protocol MainActorBuilder: Builder {}

extension MainActorBuilder {
    /// Builds the instance registered for this model type in the current container, on the main actor;
    /// traps with a message that names the model type and how to register it if it is not registered.
    ///
    /// ```swift
    /// @MainActor func showProfile() {
    ///     let controller = ProfileVCBuilder(userID: "42").build()   // any ProfileView
    /// }
    /// ```
    /// `@MainActor`, so a call from code off the main actor does not compile (from async code,
    /// `await model.build()` hops). It is chosen over ``Builder/build(isolation:file:line:)``, the
    /// run-time-checked build every ``Builder`` has. The registration may be a main-actor closure, a
    /// ``MainActorBuildable`` implementation, or a plain closure, which then runs on the main actor too.
    /// Use ``InjectionManager/build(_:isolation:)`` to get an ``InjectionError`` instead of a trap.
    /// - Parameters:
    ///   - file: The file the trap reports (leave the default).
    ///   - line: The line the trap reports (leave the default).
    @MainActor public func build(file: StaticString = #fileID, line: UInt = #line) -> BuildResult {
        do {
            return try InjectionManager.currentContainer.build(self, caller: MainActor.shared)
        } catch { InjectionManager.fail(error, file: file, line: line) }
    }
}

/// An implementation built from its builder model: `init(builder:)` is all a registration needs.
///
/// ```swift
/// final class ProfileScreenImpl: ProfileScreen, Buildable {
///     let userID: String
///     init(builder: ProfileScreenBuilder) { userID = builder.userID }
/// }
/// InjectionManager.register(ProfileScreenBuilder.self, building: ProfileScreenImpl.self)
/// ```
public protocol Buildable {
    /// The model this type is built from.
    associatedtype InputBuilder: Builder
    /// Builds an instance from `builder`. It may inject its own dependencies.
    init(builder: InputBuilder)
}

/// A main-actor implementation (a view controller) built from its builder model.
///
/// ```swift
/// @MainActor final class ProfileViewController: MainActorBuildable {
///     init(builder: ProfileVCBuilder) { ... }
/// }
/// InjectionManager.register(ProfileVCBuilder.self, building: ProfileViewController.self)
/// ```
@MainActor public protocol MainActorBuildable {
    /// The model this type is built from.
    associatedtype InputBuilder: Builder
    /// Builds an instance from `builder`, on the main actor. It may inject its own dependencies.
    init(builder: InputBuilder)
}

/// The registration form of jmfieldman/Inject, for code moving from it: a closure that takes the
/// model as `Any`.
///
/// ```swift
/// BuilderManager.register(ProfileScreenBuilder.self) { builder in
///     ProfileScreenImpl(builder: builder as! ProfileScreenBuilder)
/// }
/// ```
/// Prefer the typed form, `InjectionManager.register(ProfileScreenBuilder.self) { builder in ... }`,
/// which needs no cast (see Docs/Migrating.md).
public enum BuilderManager {
    /// Registers `resolutionFunction` as the build closure for `type` in the current container.
    public static func register<Model: Builder>(
        _ type: Model.Type, file: StaticString = #fileID,
        _ resolutionFunction: @escaping @Sendable (Any) -> Model.BuildResult
    ) { InjectionManager.currentContainer.register(type, file: file, factory: resolutionFunction) }
}

/// A registered build closure, the value a builder's registration holds (as a `.singleton`).
///
/// Immutable. `make` is not `@Sendable` because the wrappers made here capture metatypes (`Model`,
/// an implementation type), which are immutable but not `Sendable` to older compilers; every closure
/// it captures is the caller's `@Sendable` one.
final class BuildClosure<Model: Builder>: @unchecked Sendable {
    let make: (Model) throws -> Model.BuildResult
    /// Whether `make` may run only on the main actor.
    let isMainActor: Bool

    init(isMainActor: Bool, _ make: @escaping (Model) throws -> Model.BuildResult) {
        (self.make, self.isMainActor) = (make, isMainActor)
    }
}

/// Thrown by a `building:` registration whose implementation is not a `BuildResult`.
struct NotABuildResult: Error, CustomStringConvertible {
    let implementation: Any.Type
    let model: Any.Type
    let result: Any.Type

    var description: String {
        "\(implementation) is not a \(result), the BuildResult of \(model): make \(implementation) conform to it, "
            + "or register a closure that returns a \(result)"
    }
}

extension InjectionContainer {
    // MARK: - Builders

    /// Registers how to build `Model.BuildResult` from a `Model`, replacing any earlier registration.
    ///
    /// ```swift
    /// container.register(ProfileScreenBuilder.self) { builder in ProfileScreenImpl(builder: builder) }
    /// let screen = try container.build(ProfileScreenBuilder(userID: "42"))
    /// ```
    /// The closure runs on every build, with the model; it may inject dependencies and throw.
    public func register<Model: Builder>(
        _ builder: Model.Type, file: StaticString = #fileID, factory: @escaping @Sendable (Model) throws -> Model.BuildResult
    ) { registerBuilder(BuildClosure(isMainActor: false, factory), file: file) }

    /// Registers a build closure isolated to the main actor, for main-actor implementations.
    ///
    /// ```swift
    /// container.register(ProfileVCBuilder.self, isolation: MainActor.shared) { builder in
    ///     ProfileViewController(builder: builder)
    /// }
    /// ```
    /// A synchronous build off the main actor fails with ``InjectionError/Kind/wrongIsolation``;
    /// ``buildAsync(_:)`` hops to the main actor.
    public func register<Model: Builder>(
        _ builder: Model.Type, isolation: MainActor, file: StaticString = #fileID,
        factory: @escaping @MainActor @Sendable (Model) throws -> Model.BuildResult
    ) {
        registerBuilder(BuildClosure<Model>(isMainActor: true) { (model: Model) in
            // Runs only after `build` saw a main-actor caller, on this thread: nothing crosses actors.
            let model = Unchecked(model)
            return try MainActor.assumeIsolated { Unchecked(try factory(model.value)) }.value
        }, file: file)
    }

    /// Registers a ``Buildable`` implementation: every build calls `Implementation(builder:)`.
    ///
    /// ```swift
    /// container.register(ProfileScreenBuilder.self, building: ProfileScreenImpl.self)
    /// ```
    /// The compiler cannot check that `Implementation` is a `Model.BuildResult` (a protocol type), so
    /// a build checks it and fails with ``InjectionError/Kind/factoryFailed`` naming both types if not.
    public func register<Model: Builder, Implementation: Buildable>(
        _ builder: Model.Type, building implementation: Implementation.Type, file: StaticString = #fileID
    ) where Implementation.InputBuilder == Model {
        registerBuilder(BuildClosure<Model>(isMainActor: false) { (model: Model) in
            try Self.cast(Implementation(builder: model), to: Model.self)
        }, file: file)
    }

    /// Registers a ``MainActorBuildable`` implementation: every build calls `Implementation(builder:)`
    /// on the main actor (see ``register(_:isolation:file:factory:)``).
    public func register<Model: Builder, Implementation: MainActorBuildable>(
        _ builder: Model.Type, building implementation: Implementation.Type, file: StaticString = #fileID
    ) where Implementation.InputBuilder == Model {
        register(builder, isolation: MainActor.shared, file: file) {
            try Self.cast(Implementation(builder: $0), to: Model.self)
        }
    }

    /// Builds `Model.BuildResult` from `builder` with the closure registered for its type; throws
    /// instead of trapping.
    ///
    /// ```swift
    /// let screen = try container.build(ProfileScreenBuilder(userID: "42"))
    /// ```
    /// - Throws: ``InjectionError``: ``InjectionError/Kind/notRegistered`` (no builder registered),
    ///   ``InjectionError/Kind/factoryFailed`` (the closure threw), ``InjectionError/Kind/wrongIsolation``
    ///   (a main-actor builder off the main actor), or any error of what the implementation resolves.
    public func build<Model: Builder>(
        _ builder: Model, isolation: isolated (any Actor)? = #isolation
    ) throws(InjectionError) -> Model.BuildResult { try build(builder, caller: isolation) }

    /// Builds `Model.BuildResult` from `builder`, hopping to the main actor for a main-actor builder.
    ///
    /// ```swift
    /// let controller = try await container.buildAsync(ProfileVCBuilder(userID: "42"))
    /// ```
    public func buildAsync<Model: Builder & Sendable>(_ builder: Model) async throws(InjectionError) -> Model.BuildResult {
        // Read once: the closure whose isolation decides where it runs is the one that runs, even if the
        // builder is registered again while this task hops.
        let held = try await asyncResolve(AnyType(builder: Model.self))
        let closure = held.value(as: (any AnyObject & Sendable).self) as! BuildClosure<Model>
        guard closure.isMainActor else { return try build(builder, with: closure, caller: nil) }
        return try await MainActor.run {
            Unchecked(Result { () throws(InjectionError) -> Model.BuildResult in
                try self.build(builder, with: closure, caller: MainActor.shared)
            })
        }.value.get()
    }

    /// Whether a builder is registered for `Model`.
    public func isRegistered<Model: Builder>(builder: Model.Type) -> Bool { isRegistered(AnyType(builder: builder)) }

    /// Removes the builder registered for `Model`.
    public func unregister<Model: Builder>(builder: Model.Type) { unregister(AnyType(builder: builder)) }

    // MARK: Internals

    func registerBuilder<Model: Builder>(_ closure: BuildClosure<Model>, file: StaticString) {
        // Held as `AnyObject`: a closure returning it captures no generic metadata.
        let held: any AnyObject & Sendable = closure
        // `ownsInstances: false`: a closure, not an instance anyone should watch for leaks.
        register(Registration(
            AnyType(builder: Model.self), lifetime: .singleton, file: file, factory: { held }, ownsInstances: false))
    }

    private static func cast<Model: Builder>(_ made: Any, to _: Model.Type) throws -> Model.BuildResult {
        guard let result = made as? Model.BuildResult else {
            throw NotABuildResult(implementation: type(of: made), model: Model.self, result: Model.BuildResult.self)
        }
        return result
    }

    /// Runs the build closure registered for `Model` in a frame of the current resolution, like a
    /// transient's factory: what it resolves is part of the chain. A builder may build itself again
    /// (with another model), so its own key is not a cycle; endless recursion ends in `tooDeep`.
    ///
    /// - Parameter read: The closure to run, if the caller read it already (`buildAsync`, which decided
    ///   where to run by it); `nil`: the one registered now.
    func build<Model: Builder>(
        _ model: Model, with read: BuildClosure<Model>? = nil, caller: (any Actor)?
    ) throws(InjectionError) -> Model.BuildResult {
        let type = AnyType(builder: Model.self)
        // Only `registerBuilder` registers a builder's key, always with a `BuildClosure<Model>`.
        let closure = if let read { read } else {
            try Self.resolve(type, as: (any AnyObject & Sendable).self, in: self, caller: caller)
                as! BuildClosure<Model>
        }
        let binding = Binding.current, thread = ThreadState.currentOrNew
        if closure.isMainActor && !OSThread.isMainActor(caller) {
            throw .wrongIsolation(type, chain: chain(binding?.frame, then: type), names: names)
        }
        try checkStack(thread, resolving: type, parent: binding?.frame)
        let frame = Frame(
            container: ObjectIdentifier(self), type: type, epoch: epoch, parent: binding?.frame,
            startsResolution: binding?.startsResolution ?? false, resolution: nil, recordsEdges: true,
            keepsInstance: false)
        let made = run(frame, thread: thread, transaction: binding?.transaction) { try closure.make(model) }
        // A root's resolution ends here: it runs what the build's nested resolves deferred.
        if frame.isRoot, let failure = frame.resolution.close() { throw failure }
        noteBuilt(frame, stored: false)
        return try made.get()
    }
}

extension InjectionManager {
    // MARK: - Builders

    /// Registers how to build `Model.BuildResult` from a `Model` in the current container.
    ///
    /// ```swift
    /// InjectionManager.register(ProfileScreenBuilder.self) { builder in ProfileScreenImpl(builder: builder) }
    /// ```
    /// See ``InjectionContainer/register(_:file:factory:)``.
    public static func register<Model: Builder>(
        _ builder: Model.Type, file: StaticString = #fileID, factory: @escaping @Sendable (Model) throws -> Model.BuildResult
    ) { currentContainer.register(builder, file: file, factory: factory) }

    /// Registers a main-actor build closure in the current container.
    ///
    /// ```swift
    /// InjectionManager.register(ProfileVCBuilder.self, isolation: MainActor.shared) { builder in
    ///     ProfileViewController(builder: builder)
    /// }
    /// ```
    public static func register<Model: Builder>(
        _ builder: Model.Type, isolation: MainActor, file: StaticString = #fileID,
        factory: @escaping @MainActor @Sendable (Model) throws -> Model.BuildResult
    ) { currentContainer.register(builder, isolation: isolation, file: file, factory: factory) }

    /// Registers a ``Buildable`` implementation for `Model` in the current container.
    ///
    /// ```swift
    /// InjectionManager.register(ProfileScreenBuilder.self, building: ProfileScreenImpl.self)
    /// ```
    public static func register<Model: Builder, Implementation: Buildable>(
        _ builder: Model.Type, building implementation: Implementation.Type, file: StaticString = #fileID
    ) where Implementation.InputBuilder == Model {
        currentContainer.register(builder, building: implementation, file: file)
    }

    /// Registers a ``MainActorBuildable`` implementation for `Model` in the current container.
    public static func register<Model: Builder, Implementation: MainActorBuildable>(
        _ builder: Model.Type, building implementation: Implementation.Type, file: StaticString = #fileID
    ) where Implementation.InputBuilder == Model {
        currentContainer.register(builder, building: implementation, file: file)
    }

    /// Builds `Model.BuildResult` from `builder` in the current container; throws instead of trapping.
    ///
    /// ```swift
    /// let screen = try InjectionManager.build(ProfileScreenBuilder(userID: "42"))
    /// ```
    public static func build<Model: Builder>(
        _ builder: Model, isolation: isolated (any Actor)? = #isolation
    ) throws(InjectionError) -> Model.BuildResult { try currentContainer.build(builder, caller: isolation) }

    /// Builds `Model.BuildResult` from `builder`, hopping to the main actor for a main-actor builder.
    ///
    /// ```swift
    /// let controller = try await InjectionManager.buildAsync(ProfileVCBuilder(userID: "42"))
    /// ```
    public static func buildAsync<Model: Builder & Sendable>(_ builder: Model) async throws(InjectionError) -> Model.BuildResult {
        try await currentContainer.buildAsync(builder)
    }

    /// Whether a builder is registered for `Model` in the current container.
    public static func isRegistered<Model: Builder>(builder: Model.Type) -> Bool {
        currentContainer.isRegistered(builder: builder)
    }

    /// Removes the builder registered for `Model` from the current container.
    public static func unregister<Model: Builder>(builder: Model.Type) { currentContainer.unregister(builder: builder) }
}
