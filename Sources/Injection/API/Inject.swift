/// Returns the instance registered for `type` in the current container; traps if it cannot.
///
/// Use it to initialise immutable properties and as a constructor's default argument:
///
/// ```swift
/// final class ProfileViewModel {
///     let api = Inject((any API).self)   // explicit type
///     let clock: any Clock = Inject()    // inferred type
///     let store: any Store
///     init(store: any Store = Inject()) { self.store = store }
/// }
/// ```
///
/// It resolves from ``InjectionManager/currentContainer``: the container bound to the current task by
/// ``InjectionManager/withContainer(_:operation:)``, or the process-wide one. Inside a factory it
/// resolves from the container running that factory.
///
/// > Warning: `Inject()` cannot throw. A missing registration, a dependency cycle or a throwing
/// > factory stops the process with a message that starts with `Injection:`, names the type and the
/// > chain that needed it, and says how to fix it. Use ``InjectionManager/resolve(_:isolation:)-(Value.Type,_)`` to handle
/// > those failures instead.
///
/// - Parameters:
///   - type: The registered type. Omit it where the result's type is inferred.
///   - isolation: The caller's actor, filled in by the compiler: it tells a `@MainActor` caller apart,
///     so a main-actor factory can run right here.
///   - file: The file a trap reports (leave the default).
///   - line: The line a trap reports (leave the default).
/// - Returns: The cached instance for `.scoped` and `.singleton` registrations, a new one for `.transient`.
public func Inject<Value>(
    _ type: Value.Type = Value.self, isolation: isolated (any Actor)? = #isolation, file: StaticString = #fileID,
    line: UInt = #line
) -> Value {
    do {
        return try InjectionContainer.resolve(AnyType(type), as: Value.self, in: nil, caller: isolation)
    } catch { InjectionManager.fail(error, file: file, line: line) }
}

/// Returns the instance registered for the typed key `Key`; traps if it cannot.
///
/// ```swift
/// enum PrimaryDatabase: InjectionKey { typealias Value = any Database }
/// let db = Inject(PrimaryDatabase.self)              // a Database
/// let sameDB: any Database = Inject(PrimaryDatabase.self)
/// ```
/// See ``InjectionKey`` and ``Inject(_:isolation:file:line:)-(Value.Type,_,_,_)``.
public func Inject<Key: InjectionKey>(
    _ key: Key.Type, isolation: isolated (any Actor)? = #isolation, file: StaticString = #fileID, line: UInt = #line
) -> Key.Value {
    do {
        return try InjectionContainer.resolve(AnyType(key: key), as: Key.Value.self, in: nil, caller: isolation)
    } catch { InjectionManager.fail(error, file: file, line: line) }
}
