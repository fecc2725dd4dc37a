/// Why a resolution failed: which type, the chain of types being resolved, and how to fix it.
///
/// ``InjectionManager/resolve(_:isolation:)-(Value.Type,_)`` throws it; ``Inject(_:isolation:file:line:)-(Value.Type,_,_,_)`` traps with its ``description``.
///
/// ```swift
/// do {
///     let api = try InjectionManager.resolve((any API).self)
/// } catch {
///     print(error.kind, error.chain)   // notRegistered ["API"]
///     print(error)                     // Injection: no registration for API ...
/// }
/// ```
public struct InjectionError: Error, CustomStringConvertible, Sendable {
    /// The category of an ``InjectionError``.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The category's name, e.g. `notRegistered`.
        public let description: String

        /// Nothing is registered for the requested type.
        public static let notRegistered = Kind(description: "notRegistered")
        /// The type needs itself, directly or through other types; ``InjectionError/chain`` is the cycle.
        public static let cycle = Kind(description: "cycle")
        /// The registered factory threw; ``InjectionError/underlyingError`` holds what it threw.
        public static let factoryFailed = Kind(description: "factoryFailed")
        /// A resolve ran inside `resetCurrentContainer { }`, before the new scope was committed.
        public static let resolvedDuringReset = Kind(description: "resolvedDuringReset")
        /// A `@MainActor` factory had to run, synchronously, off the main actor.
        public static let wrongIsolation = Kind(description: "wrongIsolation")
        /// An `async` factory had to run in a synchronous resolve, before it was built.
        public static let asyncFactory = Kind(description: "asyncFactory")
        /// A `.weak` registration's factory returned a value that is not a class instance.
        public static let weakNeedsClass = Kind(description: "weakNeedsClass")
        /// ``InjectionContainer/verify()`` found problems; ``InjectionError/problems`` lists each one.
        public static let verificationFailed = Kind(description: "verificationFailed")
        /// An ``InjectLazy`` handle was read after the container it was made in had been released.
        public static let containerReleased = Kind(description: "containerReleased")
        /// The graph nests deeper than the thread's remaining stack allows; ``InjectionError/chain`` is the chain.
        public static let tooDeep = Kind(description: "tooDeep")
        /// A `.singleton` or `.weak` registration's factory resolves a `.scoped` one, directly or through
        /// transients, so it keeps the instance of the scope that built it after a reset (found by
        /// ``InjectionContainer/verify()``); ``InjectionError/chain`` runs from the holder to the scoped type.
        public static let captiveDependency = Kind(description: "captiveDependency")
    }

    /// The category of the failure.
    public var kind: Kind { storage.kind }
    /// The readable name of the type that could not be resolved.
    public var typeName: String { storage.typeName }
    /// The types being resolved, outermost first, ending with ``typeName``; for a cycle, the cycle itself.
    public var chain: [String] { storage.chain }
    /// The error a factory threw, for ``Kind/factoryFailed``.
    public var underlyingError: (any Error)? { storage.underlyingError }
    /// For ``Kind/verificationFailed``: every problem found, one error each; otherwise empty.
    public var problems: [InjectionError] { storage.problems }
    /// The full message: starts with `Injection:`, names the type and the chain, and says how to fix it.
    public var description: String { storage.description }

    /// All of it, in one object: the error is one word, so a resolve's result (its value or this error)
    /// moves through the resolver in registers, where nine words went through the runtime's generic
    /// copies of `Result`.
    private let storage: Storage

    // Not one tuple field: the optimizer of Swift 6.3.1 crashes on it ("Found ownership error", in
    // `InjectionManager.fail`), in release builds only.
    private final class Storage: Sendable {
        let kind: Kind, typeName: String, chain: [String]
        let underlyingError: (any Error)?, problems: [InjectionError], description: String

        init(
            _ kind: Kind, _ typeName: String, _ chain: [String], _ underlyingError: (any Error)?,
            _ problems: [InjectionError], _ description: String
        ) {
            (self.kind, self.typeName, self.chain) = (kind, typeName, chain)
            (self.underlyingError, self.problems, self.description) = (underlyingError, problems, description)
        }
    }

    init(
        kind: Kind, typeName: String, chain: [String], underlyingError: (any Error)? = nil,
        problems: [InjectionError] = [], description: String
    ) { storage = Storage(kind, typeName, chain, underlyingError, problems, description) }

    /// An error about `type`, met while resolving `chain`. `message` gets the type's readable name and, for
    /// a chain longer than the type itself, ` (resolving A → B)` to put after it (else an empty string).
    init(
        _ kind: Kind, _ type: AnyType, chain: [AnyType], names: TypeNames, underlyingError: (any Error)? = nil,
        message: (_ name: String, _ resolving: String) -> String
    ) {
        let name = names.name(type), chainNames = chain.map(names.name)
        let resolving = chainNames.count > 1 ? " (resolving \(chainNames.joined(separator: " → ")))" : ""
        self.init(
            kind: kind, typeName: name, chain: chainNames, underlyingError: underlyingError,
            description: message(name, resolving))
    }
}

// MARK: - Messages

extension InjectionError {
    /// `escaped`: resolved from the process-wide container, with no container bound, while a test's lives.
    /// `registered`: the registered keys whose `Value` is `type`, and what the container remembers of the
    /// registration of `type` that `unregister` or `removeAll` took out (see ``ContainerState/registered(around:)``).
    static func notRegistered(
        _ type: AnyType, chain: [AnyType], names: TypeNames, escaped: Bool = false,
        registered: (keys: [AnyType], removed: (file: StaticString, byRemoveAll: Bool)?) = ([], nil)
    ) -> Self {
        InjectionError(.notRegistered, type, chain: chain, names: names) { name, resolving in
            let literal = TypeNames.literal(type.type, named: name)
            // Removed by the app itself: the fix is to register it again, not to add a registration at launch.
            let again = registered.removed.map { removed in
                let unregister = "unregister(\(type.isBuilder ? "builder: " : "")\(literal).self)"
                return "It was registered in \(removed.file), then removed by "
                    + (removed.byRemoveAll ? "removeAll()" : unregister) + "; register it again"
            }
            if type.isBuilder {
                return """
                    Injection: no builder registered for \(name)\(resolving). \
                    \(again.map { $0 + ":" } ?? "Register it at launch:") \
                    InjectionManager.register(\(literal).self) { builder in ... }
                    """
            }
            // The keys, in name order (the first one is suggested), before the advice to register it.
            let keyNames = registered.keys.map { (names.name($0), $0.type) }.sorted { $0.0 < $1.0 }
            let keyList = keyNames.map(\.0).joined(separator: ", ")
            let underKeys = keyNames.first.map { "It is registered under keys: \(keyList) — resolve one of them: "
                + "Inject(\(TypeNames.literal($0.1, named: $0.0)).self). " } ?? ""
            let register = again.map { $0 + " before it is resolved:" }
                ?? (keyNames.isEmpty ? "Register" : "Or register") + " it before it is resolved, e.g. at launch:"
            var hint = ""
            if TypeNames.isPrivate(type.type) {
                hint = " (\(name) is private, so that line compiles only in the file that declares it.)"
            }
            if let optional = type.type as? any OptionalType.Type {
                let wrapped = TypeNames.literal(optional.wrappedType, named: names.name(of: optional.wrappedType))
                hint = " If you meant the non-optional type, write Inject(\(wrapped).self): " +
                    "Inject() into an optional asks for \(name) itself."
            }
            if escaped {
                hint += " It was requested from the process-wide container by code bound to no container while a " +
                    "test runs: if a test sent this work to a queue or a thread, wrap it in InjectionManager.bound { ... }."
            }
            return """
                Injection: no registration for \(name)\(resolving). \
                \(underKeys)\(register) \
                InjectionManager.register(\(literal).self) { ... }\(hint)
                """
        }
    }

    /// `isTransient`: every type on the cycle is `.transient` or a builder, so nothing is cached for a
    /// back-reference set after construction to find: the advice leaves that way out.
    static func cycle(_ type: AnyType, path: [AnyType], isTransient: Bool = false, names: TypeNames) -> InjectionError {
        let pathNames = path.map(names.name)
        let advice = "Break it by removing one of these dependencies, or by " + (isTransient
            ? "resolving one of them on first use (InjectLazy): every type on it is .transient"
                + (path.contains(where: \.isBuilder) ? " or a builder" : "")
                + ", so none is cached for a back-reference to find."
            : "setting the back-reference after construction (register(_:lifetime:factory:postConstruction:)) " +
                "or on first use (InjectLazy).")
        return InjectionError(
            kind: .cycle, typeName: names.name(type), chain: pathNames,
            description: "Injection: dependency cycle: \(pathNames.joined(separator: " → ")). \(advice)")
    }

    /// `inPostConstruction`: the `postConstruction` of `type` threw, not its factory.
    static func factoryFailed(
        _ type: AnyType, chain: [AnyType], underlying: any Error, inPostConstruction: Bool, names: TypeNames
    ) -> Self {
        InjectionError(.factoryFailed, type, chain: chain, names: names, underlyingError: underlying) {
            name, resolving in
            let (closure, next) = type.isBuilder
                ? ("build closure", "build runs it") : ("factory", "resolve runs the factory")
            return inPostConstruction ? """
                Injection: the postConstruction of \(name) threw \(underlying)\(resolving). \
                The instance was evicted, with everything the same resolve built; objects that already \
                received them keep them. The next resolve builds them again.
                """ : """
                Injection: the \(closure) for \(name) threw \(underlying)\(resolving). \
                Nothing was cached, so the next \(next) again; fix the \(closure) or what it needs.
                """
        }
    }

    static func resolvedDuringReset(_ type: AnyType, chain: [AnyType], names: TypeNames) -> InjectionError {
        InjectionError(.resolvedDuringReset, type, chain: chain, names: names) { name, _ in """
            Injection: \(name) was \(type.isBuilder ? "built" : "resolved") inside resetCurrentContainer { }, \
            before the new scope exists. Only register inside the block; \
            \(type.isBuilder ? "build" : "resolve") after it returns.
            """
        }
    }

    static func weakNeedsClass(_ type: AnyType, chain: [AnyType], names: TypeNames) -> InjectionError {
        InjectionError(.weakNeedsClass, type, chain: chain, names: names) { name, resolving in """
            Injection: \(name) is registered with lifetime .weak, but its factory returned a value that \
            is not a class instance\(resolving); only class instances can be held weakly. \
            Register it .scoped or .transient, or return a class.
            """
        }
    }

    static func wrongIsolation(_ type: AnyType, chain: [AnyType], names: TypeNames) -> InjectionError {
        InjectionError(.wrongIsolation, type, chain: chain, names: names) { name, resolving in
            let (built, closure, verb) = type.isBuilder
                ? ("built", "build closure", "Build") : ("resolved", "factory", "Resolve")
            let fix = type.isBuilder
                ? "`try await InjectionManager.buildAsync(model)`"
                : "`try await container.resolveAsync(\(TypeNames.literal(type.type, named: name)).self)` "
                    + "(or `InjectionManager.resolveAsync`)"
            return """
                Injection: \(name) is registered with isolation: MainActor, but it was \(built) synchronously off the \
                main actor\(resolving), so its \(closure) cannot run. \(verb) it from @MainActor code, or \
                with \(fix), which hops to the main actor.
                """
        }
    }

    static func asyncFactory(_ type: AnyType, lifetime: InjectionLifetime, chain: [AnyType], names: TypeNames) -> Self {
        InjectionError(.asyncFactory, type, chain: chain, names: names) { name, resolving in
            let literal = TypeNames.literal(type.type, named: name)
            let resolveAsync = "`try await InjectionManager.resolveAsync(\(literal).self)`"
            let prepare = "`try await InjectionManager.prepare(\(literal).self)`"
            let mainActor = " If the factory is async only to reach the main actor, register it with isolation: " +
                "MainActor.shared instead (`register(\(literal).self, isolation: MainActor.shared) { ... }`): then " +
                "Inject() on the main actor builds it."
            let advice = switch lifetime {
            case .transient:
                """
                Injection: \(name) has an async factory and is .transient, so it cannot be resolved synchronously\
                \(resolving): each resolve builds a new instance, which only an async resolve can do. \
                Resolve it with \(resolveAsync), or register it .scoped or .singleton and build it at launch \
                with \(prepare).
                """
            case .weak:
                """
                Injection: \(name) has an async factory and no live instance, so it cannot be resolved synchronously\
                \(resolving). Resolve it with \(resolveAsync), or build it first with \(prepare) and keep \
                what it built: a .weak instance lives only while something holds it.
                """
            default:
                """
                Injection: \(name) has an async factory and is not built yet, so it cannot be resolved \
                synchronously\(resolving). Build it first: \(prepare) \
                at launch (then Inject() returns the cached instance), or resolve it with \(resolveAsync).
                """
            }
            return advice + mainActor
        }
    }

    static func verificationFailed(_ problems: [InjectionError], registrations: Int) -> InjectionError {
        let list = problems.enumerated().map { "  \($0.offset + 1). \($0.element.description)" }
        return InjectionError(
            kind: .verificationFailed, typeName: "", chain: [], problems: problems, description: """
            Injection: verify() found \(problems.count) problem\(problems.count == 1 ? "" : "s") \
            in \(registrations) registration\(registrations == 1 ? "" : "s"):
            \(list.joined(separator: "\n"))
            """)
    }

    /// `path` runs from a `.singleton` or `.weak` holder (`lifetime`) through transients to a `.scoped` type.
    static func captiveDependency(_ path: [AnyType], lifetime: InjectionLifetime, names: TypeNames) -> InjectionError {
        InjectionError(.captiveDependency, path[0], chain: path, names: names) { name, _ in
            let scoped = path[path.count - 1], held = names.name(path[path.count - 1])
            let through = path.count > 2 ? " through \(path.map(names.name).joined(separator: " → "))" : ""
            return """
                Injection: \(name) is .\(lifetime) but its factory resolves \(held), which is .scoped\(through): \
                after a reset, \(name) still holds the \(held) of the scope that built it (after logout, the old \
                user's). Make \(name) .scoped, or hold an \
                InjectProvider<\(TypeNames.literal(scoped.type, named: held))> and resolve through it when it is needed.
                """
        }
    }

    static func tooDeep(_ type: AnyType, chain: [AnyType], stackSize: UInt, names: TypeNames) -> InjectionError {
        InjectionError(.tooDeep, type, chain: chain, names: names) { name, _ in
            let (verb, nested) = type.isBuilder
                ? ("building", "factories and build closures") : ("resolving", "factories")
            let chainNames = chain.map(names.name)
            let ends = chainNames.count > 2
                ? "\(chainNames[0]) → … → \(chainNames.last!)" : chainNames.joined(separator: " → ")
            return """
                Injection: \(verb) \(name) nests \(chainNames.count) \(nested) deep (\(ends)), and \
                this thread's \(stackSize >> 10) KiB stack has less than \(ThreadState.stackReserve >> 10) KiB left, \
                so resolving on would overflow it. Make the graph shallower (a factory that resolves what it needs \
                on first use, with InjectLazy, ends the chain there), or resolve it on a thread with a larger \
                stack: a nested resolve uses about 11 KiB in a debug build and 4 KiB in release.
                """
        }
    }

    static func containerReleased(_ type: AnyType, handle: String = "InjectLazy") -> InjectionError {
        let name = TypeNames.written(type.type)
        return InjectionError(
            kind: .containerReleased, typeName: name, chain: [name], description: """
            Injection: \(handle)<\(name)> was read after its container was released, so there is nothing to \
            resolve \(name) from. A handle does not keep its container alive: keep the container for as long as \
            the object holding the handle, or read the handle while the container exists.
            """)
    }
}
