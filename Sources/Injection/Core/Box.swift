/// A built value, in one allocation laid out for its type: the container caches it, and `resolve` copies
/// the value out typed.
///
/// Not generic on purpose: reading a generic class's field from unspecialized code (every resolve is)
/// needs that class's metadata, a run-time lookup per read. The header is the value's static type; the
/// value lives in the tail (a `ManagedBuffer`), aligned for its type. Immutable once made.
package final class Box: ManagedBuffer<Any.Type, UInt> {
    // Immutable once made; not `Sendable` (its superclass is not): `Unchecked` carries it across tasks.
    /// Boxes `value`.
    package static func make<Value>(_ value: consuming Value) -> Box {
        // The tail is word-aligned: a value aligned more strictly gets room to align it.
        let slack = max(MemoryLayout<Value>.alignment - MemoryLayout<UInt>.alignment, 0)
        let words = (MemoryLayout<Value>.size + slack + MemoryLayout<UInt>.stride - 1) / MemoryLayout<UInt>.stride
        let box = Box.create(minimumCapacity: max(words, 1)) { _ in Value.self } as! Box
        box.storage(of: Value.self).initialize(to: value)
        return box
    }

    /// The stored value's static type (the registered `Value`).
    var type: Any.Type { withUnsafeMutablePointerToHeader { $0.pointee } }  // Not `header`: no exclusivity check.

    private func storage<Value>(of _: Value.Type) -> UnsafeMutablePointer<Value> {
        let tail = UnsafeMutableRawPointer(withUnsafeMutablePointerToElements { $0 })
        return tail.alignedUp(toMultipleOf: MemoryLayout<Value>.alignment).assumingMemoryBound(to: Value.self)
    }

    deinit {
        func destroy<Value>(_: Value.Type) { storage(of: Value.self).deinitialize(count: 1) }
        _openExistential(type, do: destroy)
    }

    /// The stored value; `Value` must be the type the box was made for.
    func value<Value>(as _: Value.Type) -> Value { storage(of: Value.self).pointee }

    /// The instance as a class instance (an optional's wrapped one), or `nil` for a value type or `nil`.
    var object: AnyObject? {
        func object<Value>(_: Value.Type) -> AnyObject? { Box.object(of: storage(of: Value.self).pointee) }
        return _openExistential(type, do: object)
    }

    /// Tells the instance it was evicted, if it is ``InjectionDisposable``: a class instance, or an optional's
    /// wrapped one (the cast unwraps it).
    func dispose() {
        func dispose<Value>(_: Value.Type) {
            let value = storage(of: Value.self).pointee
            // Asked of the value's class once for the process: for a class that is not disposable, the cast searches
            // the conformances anew on every eviction, 61% of a reset (the reset + first resolves floor, ≤ 3x of the
            // seed design). Not for an optional or an error box, whose dynamic type is not their wrapped one's.
            let isWrapped = _isOptional(Value.self) || Value.self == (any Error).self
            let type = isWrapped ? nil : ObjectIdentifier(Swift.type(of: value as Any))
            if let type, Self.notDisposable.withLock({ $0.contains(type) }) { return }
            if let disposable = value as? any InjectionDisposable { return disposable.dispose() }
            if let type { Self.notDisposable.withLock { _ = $0.insert(type) } }
        }
        _openExistential(type, do: dispose)
    }

    /// The classes found not to be ``InjectionDisposable`` (see ``dispose()``).
    private static let notDisposable = LockedState(Set<ObjectIdentifier>())

    /// Whether the instance is an `Optional` holding `nil`, which is never cached.
    var isNilOptional: Bool {
        func isNil<Value>(_: Value.Type) -> Bool {
            // The metadata-kind test first: the cast looks up a conformance, which costs far more.
            _isOptional(Value.self) && ((storage(of: Value.self).pointee as? any OptionalType)?.isNil ?? false)
        }
        return _openExistential(type, do: isNil)
    }

    /// `value` as a class instance (an optional's wrapped one), or `nil` for a value type or `nil`.
    static func object<Value>(of value: Value) -> AnyObject? {
        if _isOptional(Value.self) { return (value as? any OptionalType)?.wrappedObject }
        if Value.self == (any Error).self {
            // Not through `Any`: an `any Error` keeps its value in a box of its own, and `Any` made from it
            // in generic code hands out that box instead.
            let error = value as! any Error
            return Swift.type(of: error) is AnyClass ? error as AnyObject : nil
        }
        let value: Any = value
        return Swift.type(of: value) is AnyClass ? value as AnyObject : nil
    }
}

/// A weak reference to an instance: a `.weak` registration's, and an evicted one that
/// `liveInstancesFromPreviousScopes()` watches.
package final class WeakReference: @unchecked Sendable {  // `object` is a weak reference: the runtime synchronises it.
    weak var object: AnyObject?
    let type: AnyType
    /// The registered value type, to box the object again (``box``).
    let valueType: Any.Type

    init(_ object: AnyObject, type: AnyType, valueType: Any.Type) {
        (self.object, self.type, self.valueType) = (object, type, valueType)
    }

    /// The instance, if it is still alive, in a new box of ``valueType``: the box it came from had that
    /// type.
    var box: Box? {
        guard let object else { return nil }
        func box<Value>(_: Value.Type) -> Box { Box.make(object as! Value) }
        return _openExistential(valueType, do: box)
    }
}
