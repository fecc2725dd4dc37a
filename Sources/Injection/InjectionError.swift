/// Why a resolution failed: which type, the chain of types being resolved, and how to fix it.
///
/// ``InjectionManager/resolve(_:)`` throws it; ``Inject(_:file:line:)`` traps with its ``description``.
///
/// ```swift
/// do {
///     let api = try InjectionManager.resolve(API.self)
/// } catch {
///     print(error.kind, error.chain)   // notRegistered ["ViewModel", "API"]
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
    }

    /// The category of the failure.
    public let kind: Kind
    /// The readable name of the type that could not be resolved.
    public let typeName: String
    /// The types being resolved, outermost first, ending with ``typeName``; for a cycle, the cycle itself.
    public let chain: [String]
    /// The error a factory threw, for ``Kind/factoryFailed``.
    public let underlyingError: (any Error)?
    /// The full message: starts with `Injection:`, names the type and the chain, and says how to fix it.
    public let description: String

    init(kind: Kind, typeName: String, chain: [String], underlyingError: (any Error)? = nil, description: String) {
        self.kind = kind
        self.typeName = typeName
        self.chain = chain
        self.underlyingError = underlyingError
        self.description = description
    }
}

// MARK: - Messages

extension InjectionError {
    static func notRegistered(_ typeName: String, chain: [String]) -> InjectionError {
        let needed = chain.count > 1 ? " (resolving \(chain.joined(separator: " → ")))" : ""
        return InjectionError(
            kind: .notRegistered, typeName: typeName, chain: chain,
            description: """
            Injection: no registration for \(typeName)\(needed). \
            Register it before it is resolved, e.g. at launch: \
            InjectionManager.register(\(_TypeName.literal(typeName)).self) { ... }
            """)
    }

    static func cycle(_ typeName: String, path: [String]) -> InjectionError {
        InjectionError(
            kind: .cycle, typeName: typeName, chain: path,
            description: """
            Injection: dependency cycle: \(path.joined(separator: " → ")). \
            Break it by removing one of these dependencies, or by setting the back-reference \
            after construction (register(_:postConstruction:)) or on first use (InjectLazy).
            """)
    }

    static func factoryFailed(_ typeName: String, chain: [String], underlying: any Error) -> InjectionError {
        let needed = chain.count > 1 ? " (resolving \(chain.joined(separator: " → ")))" : ""
        return InjectionError(
            kind: .factoryFailed, typeName: typeName, chain: chain, underlyingError: underlying,
            description: """
            Injection: the factory for \(typeName) threw \(underlying)\(needed). \
            Nothing was cached, so the next resolve runs the factory again; \
            fix the factory or what it needs.
            """)
    }

    static func resolvedDuringReset(_ typeName: String, chain: [String]) -> InjectionError {
        InjectionError(
            kind: .resolvedDuringReset, typeName: typeName, chain: chain,
            description: """
            Injection: \(typeName) was resolved inside resetCurrentContainer { }, before the new scope \
            exists. Only register inside the block; resolve after it returns.
            """)
    }
}
