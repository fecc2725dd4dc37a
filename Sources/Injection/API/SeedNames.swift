// jmfieldman/Inject's remaining public names, so code moving from it compiles. Each is deprecated where this
// library's model differs, with a message that says what to write instead (Docs/Migrating.md, "From
// jmfieldman/Inject's core API").

extension InjectionManager {
    /// jmfieldman/Inject's registration without its lock, for batches at launch. Registration here is always
    /// thread-safe and about as cheap, so this registers, as ``register(_:lifetime:file:factory:postConstruction:)-(Value.Type,_,_,_,_)`` does.
    @available(*, deprecated, message: "Registration is always thread-safe: write register(T.self) { ... }")
    public static func unsafeRegister<Value>(
        _ type: Value.Type, file: StaticString = #fileID, _ resolutionFunction: @escaping @Sendable () -> Value
    ) { currentContainer.register(type, file: file, factory: resolutionFunction) }

    /// jmfieldman/Inject's switch for cycle detection. Here every resolve detects cycles, whatever this is set
    /// to: it reads `true`, and setting it changes nothing.
    @available(*, deprecated, message: "Cycles are always detected here: remove the assignment")
    public static var detectResolutionCycles: Bool {
        get { true }
        set { _ = newValue }
    }
}

extension BuilderManager {
    /// jmfieldman/Inject's builder registration without its lock. Registration here is always thread-safe, so
    /// this registers, as ``register(_:file:_:)`` does.
    @available(*, deprecated, message: "Registration is always thread-safe: write register(Model.self) { ... }")
    public static func unsafeRegister<Model: Builder>(
        _ type: Model.Type, file: StaticString = #fileID,
        _ resolutionFunction: @escaping @Sendable (Any) -> Model.BuildResult
    ) { register(type, file: file, resolutionFunction) }
}

/// jmfieldman/Inject's resolution error. Nothing here throws it: every resolve throws ``InjectionError``. A
/// catch site that switches on the old cases compiles with one change, `switch error` becoming
/// `switch error.resolutionError`.
///
/// ```swift
/// do {
///     _ = try InjectionManager.resolve((any API).self)
/// } catch {
///     switch error.resolutionError {   // was: switch error
///     case .noResolutionBlock(let type): print("register \(type)")
///     default: print(error)
///     }
/// }
/// ```
@available(*, deprecated, message: "Injection throws InjectionError: switch on error.kind instead")
public enum InjectionResolutionError: Error {
    /// A dependency cycle: the types being resolved, then the one that closed the cycle.
    case cycleDetected(stack: [String], keyName: String)
    /// Nothing is registered for the type.
    case noResolutionBlock(type: String)
    /// Kept for the seed's exhaustive switches; never made (a factory's type is checked when it compiles).
    case invalidReturnType(type: String)
    /// Any other failure, with the ``InjectionError`` (or what a factory threw) that says what happened.
    case unknown(error: any Error)
}

extension InjectionError {
    /// This error as jmfieldman/Inject's ``InjectionResolutionError``, for catch sites that switch on its cases.
    @available(*, deprecated, message: "Switch on error.kind instead")
    public var resolutionError: InjectionResolutionError {
        switch kind {
        case .cycle: .cycleDetected(stack: Array(chain.dropLast()), keyName: typeName)
        case .notRegistered: .noResolutionBlock(type: typeName)
        case .factoryFailed: .unknown(error: underlyingError ?? self)
        default: .unknown(error: self)
        }
    }
}
