/// An instance held by the container, stored in raw memory typed by the registration.
///
/// Not generic on purpose: reading a generic class's field from unspecialized code needs that class's
/// metadata (a runtime cache lookup per read). Reading through `storage` needs nothing, and a cache
/// hit is a plain copy, with no `as!` cast.
final class _Box: @unchecked Sendable {
    let storage: UnsafeMutableRawPointer
    private let witness: any _BoxWitness.Type

    /// Boxes `value`; `witness` must be `_TypedBoxWitness<Value>.self` (registrations keep theirs, so
    /// making a box needs no generic-metadata lookup).
    init<Value>(_ value: consuming Value, witness: any _BoxWitness.Type) {
        let typed = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        typed.initialize(to: consume value)  // Moved in: no copy, no extra reference count.
        storage = UnsafeMutableRawPointer(typed)
        self.witness = witness
    }

    convenience init<Value>(_ value: consuming Value) {
        self.init(value, witness: _TypedBoxWitness<Value>.self)
    }

    private init(storage: UnsafeMutableRawPointer, witness: any _BoxWitness.Type) {
        self.storage = storage
        self.witness = witness
    }

    deinit { witness.destroy(storage) }

    /// The stored value; `Value` must be the type the box was created with.
    @inline(__always)
    func value<Value>(as _: Value.Type) -> Value {
        storage.assumingMemoryBound(to: Value.self).pointee
    }

    /// A new box holding a copy of this box's value.
    func copy() -> _Box { _Box(storage: witness.copy(storage), witness: witness) }
}

/// Copies and destroys a box's storage without the box being generic.
protocol _BoxWitness {
    static func copy(_ storage: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer
    static func destroy(_ storage: UnsafeMutableRawPointer)
}

enum _TypedBoxWitness<Value>: _BoxWitness {
    static func copy(_ storage: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        let copy = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        copy.initialize(to: storage.assumingMemoryBound(to: Value.self).pointee)
        return UnsafeMutableRawPointer(copy)
    }

    static func destroy(_ storage: UnsafeMutableRawPointer) {
        storage.assumingMemoryBound(to: Value.self).deinitialize(count: 1).deallocate()
    }
}

/// A registered factory and its lifetime. A new registration is a new object, so identity tells
/// whether a build is still current. The typed subclass does everything that needs the value's type.
class _AnyRegistration: @unchecked Sendable {
    let lifetime: InjectionLifetime
    /// The requested type: the registered type, or the `InjectionKey` type.
    let type: _AnyType
    /// Whether `postConstruct(_:)` has anything to do.
    let hasPostConstruction: Bool
    /// The factory, boxed as `@Sendable () throws -> Value`, so ``make(as:)`` can call it typed. A
    /// main-actor factory runs through `assumeIsolated` (only after `step` saw a main-actor caller).
    let factoryBox: _Box
    /// Whether the factory must run on the main actor.
    let isMainActor: Bool
    /// Whether the factory is `async`, so only `resolveAsync` can run it.
    let isAsync: Bool

    init(
        lifetime: InjectionLifetime, type: _AnyType, hasPostConstruction: Bool, factoryBox: _Box,
        isMainActor: Bool, isAsync: Bool
    ) {
        self.lifetime = lifetime
        self.type = type
        self.hasPostConstruction = hasPostConstruction
        self.factoryBox = factoryBox
        self.isMainActor = isMainActor
        self.isAsync = isAsync
    }

    /// Runs an `async` factory (``isAsync``) and boxes its result.
    func makeBoxAsync() async throws -> _Box { fatalError("Injection: overridden by _Registration") }

    /// Runs the factory and returns its result unboxed; `Value` must be the registered value type.
    @inline(__always)
    func make<Value>(as _: Value.Type) throws -> Value {
        try factoryBox.value(as: (@Sendable () throws -> Value).self)()
    }

    /// Runs the factory and boxes its result.
    func makeBox() throws -> _Box { fatalError("Injection: overridden by _Registration") }
    /// Runs the `postConstruction` closure on the built instance.
    func postConstruct(_ box: _Box) throws { fatalError("Injection: overridden by _Registration") }
    /// The instance as a class instance, or `nil` for a value type.
    func object(in box: _Box) -> AnyObject? { fatalError("Injection: overridden by _Registration") }
    /// A box holding `object`, which came from `object(in:)` of this registration.
    func box(for object: AnyObject) -> _Box { fatalError("Injection: overridden by _Registration") }
    /// The instance if it conforms to ``InjectionDisposable``.
    func disposable(in box: _Box) -> (any InjectionDisposable)? { fatalError("Injection: overridden by _Registration") }
    /// The identity of the instance's dynamic type.
    func dynamicType(in box: _Box) -> ObjectIdentifier { fatalError("Injection: overridden by _Registration") }
}

final class _Registration<Value>: _AnyRegistration, @unchecked Sendable {
    let factory: @Sendable () throws -> Value
    let asyncFactory: (@Sendable () async throws -> Value)?
    let postConstruction: (@Sendable (Value) throws -> Void)?
    let witness: any _BoxWitness.Type = _TypedBoxWitness<Value>.self

    /// A synchronous factory that runs wherever it is resolved.
    init(
        lifetime: InjectionLifetime, type: _AnyType, factory: @escaping @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)?
    ) {
        self.factory = factory
        self.asyncFactory = nil
        self.postConstruction = postConstruction
        super.init(
            lifetime: lifetime, type: type, hasPostConstruction: postConstruction != nil,
            factoryBox: _Box(factory), isMainActor: false, isAsync: false)
    }

    /// A synchronous factory isolated to the main actor: runs right away on the main thread, refuses
    /// other threads with a clear error, and `resolveAsync` hops to the main actor for it.
    init(
        lifetime: InjectionLifetime, type: _AnyType, mainActorFactory: @escaping @MainActor @Sendable () throws -> Value,
        postConstruction: (@Sendable (Value) throws -> Void)?
    ) {
        let factory: @Sendable () throws -> Value = {
            // Runs only after `step` saw a main-actor caller; the value stays on the main actor here.
            try MainActor.assumeIsolated { _Unchecked(try mainActorFactory()) }.value
        }
        self.factory = factory
        self.asyncFactory = nil
        self.postConstruction = postConstruction
        super.init(
            lifetime: lifetime, type: type, hasPostConstruction: postConstruction != nil,
            factoryBox: _Box(factory), isMainActor: true, isAsync: false)
    }

    /// An async factory: only `resolveAsync` and `prepare` can run it (`step` refuses synchronous
    /// resolves of it, and it never enters a thread's cache).
    init(lifetime: InjectionLifetime, type: _AnyType, asyncFactory: @escaping @Sendable () async throws -> Value) {
        let factory: @Sendable () throws -> Value = {
            preconditionFailure("Injection: an async factory was run synchronously; report this as a bug")
        }
        self.factory = factory
        self.asyncFactory = asyncFactory
        self.postConstruction = nil
        super.init(
            lifetime: lifetime, type: type, hasPostConstruction: false,
            factoryBox: _Box(factory), isMainActor: false, isAsync: true)
    }

    override func makeBox() throws -> _Box {
        _Box(try factory(), witness: witness)
    }

    override func makeBoxAsync() async throws -> _Box {
        guard let asyncFactory else { return try makeBox() }
        return _Box(try await asyncFactory(), witness: witness)
    }

    override func postConstruct(_ box: _Box) throws {
        try postConstruction?(box.value(as: Value.self))
    }

    override func object(in box: _Box) -> AnyObject? {
        let value = box.value(as: Value.self)
        return Swift.type(of: value as Any) is AnyClass ? value as AnyObject : nil
    }

    override func box(for object: AnyObject) -> _Box {
        _Box(object as! Value, witness: witness)  // `object` is an instance this registration built.
    }

    override func disposable(in box: _Box) -> (any InjectionDisposable)? {
        box.value(as: Value.self) as? any InjectionDisposable
    }

    override func dynamicType(in box: _Box) -> ObjectIdentifier {
        ObjectIdentifier(Swift.type(of: box.value(as: Value.self) as Any))
    }
}

/// A weak reference to an instance, for `.weak` registrations and stale-instance tracking.
final class _WeakReference: @unchecked Sendable {
    weak var object: AnyObject?
    let type: _AnyType
    init(_ object: AnyObject, type: _AnyType) {
        self.object = object
        self.type = type
    }
}

/// The container's entry for one key; mutated only under the container's lock.
final class _Slot {
    let registration: _AnyRegistration
    /// The cached instance for `.scoped` and `.singleton`.
    var cached: _Box?
    /// The shared instance for `.weak`, while anyone holds it.
    var weakInstance: _WeakReference?
    /// The build in progress, which other resolutions of this key wait for.
    var build: _Build?
    /// In a `verify()` copy only: why the build of this key was abandoned, so later resolves fail fast.
    var failure: InjectionError?
    /// Whether the slot left its container's `slots` (unregistered or replaced): never to be filled again.
    var isDetached = false
    /// Where the slot is in its container's `scopedSlots` (it may hold something a reset evicts), or
    /// `nil` if it is not listed.
    var scopeIndex: Int?
    /// Whether the next run of the factory should record what it resolves, for the graph. Edges are
    /// recorded once per slot (and by `verify()`), so a factory that runs again costs nothing extra.
    var recordsEdges = true
    /// Whether instances of a dynamic type conform to `InjectionDisposable`, remembered for the last
    /// type seen: the dynamic cast costs far more than the comparison, and every eviction asks.
    private var disposability: (type: ObjectIdentifier, conforms: Bool)?

    /// Whether `instance` should be told it was evicted. Call under the container's lock.
    func isDisposable(_ instance: _Box) -> Bool {
        let type = registration.dynamicType(in: instance)
        if let disposability, disposability.type == type { return disposability.conforms }
        let conforms = registration.disposable(in: instance) != nil
        disposability = (type, conforms)
        return conforms
    }

    init(_ registration: _AnyRegistration) {
        self.registration = registration
    }

}

/// Carries a value out of `MainActor.assumeIsolated`, which requires `Sendable` results: the value is
/// made and used on the main actor, so nothing crosses an isolation boundary.
struct _Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
