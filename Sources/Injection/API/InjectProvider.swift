/// A handle that resolves again on every read: for long-lived objects that must follow the session.
///
/// ```swift
/// final class SettingsScreen {
///     let session = InjectProvider(UserSession.self)
///     func render() -> String { session.value.user }   // the current scope's session, after every login
/// }
/// ```
///
/// A `.scoped` type gives the current scope's instance, so the holder follows login and logout without
/// being rebuilt; a `.transient` gives a new instance on each read; a `.singleton` the one instance.
///
/// The handle remembers the container that was current when it was created and resolves from it,
/// whichever thread reads. Like ``InjectLazy``, it holds its container weakly, so an instance the
/// container caches can hold a provider without keeping the container alive; a read after the container
/// was released fails with ``InjectionError/Kind/containerReleased``. Compare: `Inject()` resolves once,
/// when the holder is made; ``InjectLazy`` once, on first use; `InjectProvider` on every read.
///
/// > Warning: Reading ``value`` traps like `Inject()` if the type cannot be resolved; use
/// > ``resolve()`` to handle the error.
public final class InjectProvider<Value>: Sendable {
    private let target: WeakReference

    /// Creates a provider for `type`, resolving from the current container on every read.
    @_disfavoredOverload  // For a key type, the key initializer below must win.
    public init(_ type: Value.Type = Value.self) { target = WeakReference(handleFor: AnyType(type)) }

    /// Creates a provider for the typed key `Key`, resolving from the current container on every read.
    public init<Key: InjectionKey>(_ key: Key.Type) where Key.Value == Value {
        target = WeakReference(handleFor: AnyType(key: key))
    }

    /// The instance the container gives now; traps with an `Injection:` message if it cannot.
    public var value: Value {
        do { return try resolve() } catch { InjectionManager.fail(error, file: #fileID, line: #line) }
    }

    /// The instance the container gives now; throws instead of trapping.
    ///
    /// ```swift
    /// let session = try provider.resolve()
    /// ```
    /// - Throws: ``InjectionError`` as ``InjectionContainer/resolve(_:isolation:)-(Value.Type,_)`` does, or
    ///   ``InjectionError/Kind/containerReleased`` if the container is gone.
    public func resolve() throws(InjectionError) -> Value {
        try target.resolve(as: Value.self, handle: "InjectProvider")
    }
}
