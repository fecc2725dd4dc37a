/// A handle that resolves on first use and then keeps the instance: for dependencies that are
/// expensive, rarely used, or that would otherwise form a cycle.
///
/// ```swift
/// final class ViewController {
///     let provider = InjectLazy(DataProvider.self)   // DataProvider needs ViewController
///     func reload() { provider.value.refresh() }      // resolved here, once
/// }
/// ```
///
/// The handle remembers the container that was current when it was created and resolves from it,
/// whichever thread first reads ``value``. Once a resolve succeeds, every read returns that instance
/// (a `nil` from an optional registration is not kept: the next read resolves again),
/// even after a reset (create a new handle to get the next scope's instance). The handle holds its
/// container weakly, so an instance that a container caches can hold a handle without keeping the
/// container alive; a first read after the container was released fails with
/// ``InjectionError/Kind/containerReleased``. Threads racing the very
/// first read may each resolve; the first to finish wins, so a `.transient` factory may run more than
/// once then.
///
/// Use `InjectLazy` when one side of a cycle only needs the other later, at use; use
/// `register(_:lifetime:factory:postConstruction:)` when the back-reference must be set right after
/// construction, as with delegates.
///
/// > Warning: Reading ``value`` traps like `Inject()` if the type cannot be resolved (the message names
/// > the type and chain; its file and line are the library's); use ``resolve()`` to handle the error.
public final class InjectLazy<Value>: @unchecked Sendable {  // `resolved` is reachable only under its lock.
    private let target: WeakReference
    private let resolved = LockedState<Box?>(nil)

    /// Creates a handle for `type`, resolved from the current container on first use.
    @_disfavoredOverload  // For a key type, the key initializer below must win.
    public init(_ type: Value.Type = Value.self) { target = WeakReference(handleFor: AnyType(type)) }

    /// Creates a handle for the typed key `Key`, resolved from the current container on first use.
    public init<Key: InjectionKey>(_ key: Key.Type) where Key.Value == Value {
        target = WeakReference(handleFor: AnyType(key: key))
    }

    /// The instance, resolved on first read; traps with an `Injection:` message if it cannot be.
    public var value: Value {
        do { return try resolve() } catch { InjectionManager.fail(error, file: #fileID, line: #line) }
    }

    /// The instance, resolved on first call; throws instead of trapping.
    ///
    /// - Throws: ``InjectionError`` as ``InjectionContainer/resolve(_:isolation:)-(Value.Type,_)`` does, or
    ///   ``InjectionError/Kind/containerReleased`` if the handle was never resolved and its container is
    ///   gone. A failure is not remembered: the next call tries again.
    public func resolve() throws(InjectionError) -> Value {
        if let box = resolved.withLock({ $0 }) { return box.value(as: Value.self) }
        let value = try target.resolve(as: Value.self, handle: "InjectLazy")
        let box = Box.make(value)
        guard !box.isNilOptional else { return value }  // `nil` is "not available yet": the next read asks again.
        return resolved.withLock { resolved in
            if let resolved { return resolved.value(as: Value.self) }  // Another thread was first.
            resolved = box
            return value
        }
    }
}

extension WeakReference {
    /// What ``InjectLazy`` and ``InjectProvider`` resolve: `requested`, from the container that is current
    /// now, held weakly (a handle held by an instance its container caches would otherwise keep that
    /// container alive).
    convenience init(handleFor requested: AnyType) {
        self.init(InjectionManager.currentContainer, type: requested, valueType: InjectionContainer.self)
    }

    /// Resolves a handle's type now, in the current binding; `handle` names the handle's kind in the error.
    func resolve<Value>(as _: Value.Type, handle: String) throws(InjectionError) -> Value {
        guard let container = object as? InjectionContainer else { throw .containerReleased(type, handle: handle) }
        return try InjectionContainer.resolve(type, as: Value.self, in: container, caller: nil)
    }
}
