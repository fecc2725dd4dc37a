import _InjectionPlatform

/// An instance held by the container, stored inline in one allocation laid out for its type.
///
/// Not generic on purpose: reading a generic class's field from unspecialized code needs that class's
/// metadata (a runtime cache lookup per read), and making one per registered type costs a metadata
/// instantiation at launch. The header is the value's static type and a store stamp; the value lives in
/// the tail of the object (a `ManagedBuffer`), aligned for its type, so a box is one allocation of
/// 16 + 16 bytes plus the value. It carries a built value to its registration, which keeps the value
/// itself if it fits two words (then the box goes once the resolve returns, or is kept as its thread's
/// spare box for the next build's value), else keeps the box.
final class Box: ManagedBuffer<(type: Any.Type, stamp: UInt), UInt> {  // Immutable once made but for `stamp` (under the container's lock) and `take` (by its only holder); not `Sendable` (its superclass is not): `Unchecked` carries it across tasks.
    /// Boxes `value`.
    static func make<Value>(_ value: consuming Value) -> Box {
        // The tail is word-aligned; a value aligned more strictly gets room to align it. A small value
        // gets both words, so that the box can hold any small value once emptied.
        let slack = max(MemoryLayout<Value>.alignment - MemoryLayout<UInt>.alignment, 0)
        let words = isSmall(Value.self) ? 2 : (MemoryLayout<Value>.size + slack + MemoryLayout<UInt>.stride - 1) / MemoryLayout<UInt>.stride
        let box = unsafeDowncast(Box.create(minimumCapacity: words) { _ in (Value.self, 0) }, to: Box.self)
        box.storage(of: Value.self).initialize(to: consume value)  // Moved in: no copy, no extra reference count.
        return box
    }

    /// Boxes `value` in `spare` if there is one and the value is small (see ``isSmall(_:)``): a box
    /// ``take(_:as:keepingIn:)`` emptied, which has room for any small value.
    static func make<Value>(_ value: consuming Value, in spare: consuming Box?) -> Box {
        switch consume spare {
        case .some(let box) where isSmall(Value.self):
            box.withUnsafeMutablePointerToHeader { $0.pointee = (Value.self, 0) }
            box.storage(of: Value.self).initialize(to: consume value)
            return box
        default:
            return make(value)
        }
    }

    /// Whether a value of type `Value` fits two words at word alignment: a class instance, a class
    /// existential, a `String`, most small structs.
    @inline(__always)
    static func isSmall<Value>(_: Value.Type) -> Bool {
        MemoryLayout<Value>.size <= 2 * MemoryLayout<UInt>.size && MemoryLayout<Value>.alignment <= MemoryLayout<UInt>.alignment
    }

    /// The stored value's static type (the registered `Value`).
    var type: Any.Type { withUnsafeMutablePointerToHeader { $0.pointee.type } }  // Not `header`: a class property read checks exclusivity.

    /// Which store into its registration put the value there (see ``Registration/store(_:in:)``); 0 if
    /// none did. Under the container's lock.
    var stamp: UInt {
        get { withUnsafeMutablePointerToHeader { $0.pointee.stamp } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.stamp = newValue } }
    }

    /// The value; `Value` must be the type the box was made for.
    @inline(__always)
    func storage<Value>(of _: Value.Type) -> UnsafeMutablePointer<Value> {
        let tail = UnsafeMutableRawPointer(withUnsafeMutablePointerToElements { $0 })
        return tail.alignedUp(toMultipleOf: MemoryLayout<Value>.alignment).assumingMemoryBound(to: Value.self)
    }

    deinit {
        func destroy<Value>(_: Value.Type) { storage(of: Value.self).deinitialize(count: 1) }
        _openExistential(type, do: destroy)
    }

    /// The stored value; `Value` must be the type the box was made for.
    @inline(__always)
    func value<Value>(as _: Value.Type) -> Value {
        storage(of: Value.self).pointee
    }

    /// The value `box` holds, moved out of it if nothing else holds the box (which then holds nothing),
    /// else copied: a first resolve hands its caller the box's reference instead of a new one. An emptied
    /// box of a small value is kept as `thread`'s spare, for its next build to fill (no allocation).
    @inline(__always)
    static func take<Value>(_ box: consuming Box, as _: Value.Type, keepingIn thread: Unmanaged<ThreadState>?) -> Value {
        var box = box
        guard isKnownUniquelyReferenced(&box) else { return box.value(as: Value.self) }
        box.withUnsafeMutablePointerToHeader { $0.pointee.type = Void.self }  // What its deinit destroys: nothing.
        let value = box.storage(of: Value.self).move()
        if let thread, isSmall(Value.self) {
            unowned(unsafe) let state = thread.takeUnretainedValue()  // No reference count; the thread keeps it.
            state.spareBox = consume box  // Moved: no closure may capture it, or the reference would be copied.
        }
        return value
    }

    /// The instance as a class instance (an optional's wrapped one), or `nil` for a value type or `nil`.
    var object: AnyObject? {
        func object<Value>(_: Value.Type) -> AnyObject? { Instance.object(storage(of: Value.self).pointee) }
        return _openExistential(type, do: object)
    }

    /// A box of type `type` holding `object`, which came from ``object`` of a box of that type.
    static func holding(_ object: AnyObject, as type: Any.Type) -> Box {
        func box<Value>(_: Value.Type) -> Box { Box.make(object as! Value) }
        return _openExistential(type, do: box)
    }

    /// Whether the instance is an `Optional` holding `nil`, which is never cached.
    var isNilOptional: Bool {
        func isNil<Value>(_: Value.Type) -> Bool {
            // The metadata-kind test first: the cast looks up a conformance, which costs far more.
            guard _isOptional(Value.self) else { return false }
            return (storage(of: Value.self).pointee as? any OptionalType)?.isNil ?? false
        }
        return _openExistential(type, do: isNil)
    }
}

/// What the container asks of an instance, whatever holds it.
enum Instance {
    /// Whether `type` is an `Error` existential constrained to a class (`any Error & AnyObject`,
    /// `any Error & SomeClass`), or an optional of one: Swift 6.3's compiler and runtime disagree on its size
    /// (code that names the type may lay it out in 16 bytes where the metadata generic code reads says 8),
    /// so generic code cannot store, copy or box one safely: the register refuses it. Read from the type's
    /// metadata (its kind and existential flags, part of Swift's stable ABI).
    @inline(__always)
    static func hasUnreliableLayout(_ type: Any.Type) -> Bool {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        switch metadata.load(as: UInt.self) {  // The metadata's kind.
        case 0x303:  // An existential: class-constrained (bit 31 clear) with `Error` as its special protocol (1 in bits 24-29).
            return metadata.load(fromByteOffset: MemoryLayout<UInt>.size, as: UInt32.self) & 0xBF00_0000 == 0x0100_0000
        case 0x202:  // An `Optional`: its wrapped type decides.
            return wrapsUnreliableLayout(type)
        default:
            return false
        }
    }

    /// Whether the optional type `type` wraps a type of ``hasUnreliableLayout(_:)``. Out of line: the cast
    /// looks up a conformance, which only optionals pay.
    @inline(never)
    private static func wrapsUnreliableLayout(_ type: Any.Type) -> Bool {
        (type as? any OptionalType.Type).map { hasUnreliableLayout($0.wrappedType) } ?? false
    }

    /// Whether instances of `type` are ``InjectionDisposable``: what an eviction asks of every instance the
    /// container built. The answer is kept per class, process-wide (`_injection_disposable_class_lookup`):
    /// the dynamic cast costs far more than the lookup, and the first one of a class scans every
    /// conformance in the process (tens of microseconds on Linux), which the first eviction pays, not the
    /// launch. It takes the class, not the instance, so the evicted instance is not retained around it.
    @inline(__always)
    static func isDisposable(_ type: AnyClass) -> Bool {
        switch _injection_disposable_class_lookup(UInt(bitPattern: ObjectIdentifier(type))) {
        case 1: return false
        case 2: return true
        default: return learnIsDisposable(type)
        }
    }

    /// ``isDisposable(_:)`` for a class the table has no answer for: asked, then remembered.
    @inline(never)
    private static func learnIsDisposable(_ type: AnyClass) -> Bool {
        let isDisposable = type is any InjectionDisposable.Type
        _injection_disposable_class_remember(UInt(bitPattern: ObjectIdentifier(type)), isDisposable ? 1 : 0)
        return isDisposable
    }

    /// `value` as a class instance (an optional's wrapped one), or `nil` for a value type or `nil`.
    static func object<Value>(_ value: Value) -> AnyObject? {
        if _isOptional(Value.self) { return (value as? any OptionalType)?.wrappedObject }
        if Value.self == (any Error).self { return errorObject(value) }
        let value: Any = value
        return Swift.type(of: value) is AnyClass ? value as AnyObject : nil
    }

    /// The class instance an `any Error` holds, if it holds one. Not through `Any`: an `any Error` keeps
    /// its value in a box of its own, and `Any` made from it in generic code hands out that box instead.
    @inline(never)
    private static func errorObject<Value>(_ value: Value) -> AnyObject? {
        let error = value as! any Error
        return Swift.type(of: error) is AnyClass ? error as AnyObject : nil
    }
}
