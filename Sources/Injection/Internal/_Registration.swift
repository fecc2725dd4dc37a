/// An instance held by the container, stored in raw memory typed by the registration.
///
/// Not generic on purpose: reading a generic class's field from unspecialized code needs that class's
/// metadata (a runtime cache lookup per read). Reading through `storage` needs nothing, and a cache
/// hit is a plain copy, with no `as!` cast.
final class _Box: @unchecked Sendable {
    let storage: UnsafeMutableRawPointer
    private let destroy: (UnsafeMutableRawPointer) -> Void

    init<Value>(_ value: Value) {
        let typed = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        typed.initialize(to: value)
        storage = UnsafeMutableRawPointer(typed)
        destroy = { $0.assumingMemoryBound(to: Value.self).deinitialize(count: 1).deallocate() }
    }

    deinit { destroy(storage) }

    /// The stored value; `Value` must be the type the box was created with.
    @inline(__always)
    func value<Value>(as _: Value.Type) -> Value {
        storage.assumingMemoryBound(to: Value.self).pointee
    }

    /// A new box holding a copy of this box's value.
    func copy<Value>(as _: Value.Type) -> _Box { _Box(value(as: Value.self)) }
}

/// A registered factory and its lifetime. A new registration is a new object, so identity tells
/// whether a build is still current.
class _AnyRegistration: @unchecked Sendable {
    let lifetime: InjectionLifetime
    /// The requested type: the registered type, or the `InjectionKey` type.
    let type: _AnyType

    init(lifetime: InjectionLifetime, type: _AnyType) {
        self.lifetime = lifetime
        self.type = type
    }

    /// Runs the factory and boxes its result.
    func makeBox() throws -> _Box {
        fatalError("Injection: _AnyRegistration.makeBox must be overridden")
    }
}

final class _Registration<Value>: _AnyRegistration, @unchecked Sendable {
    let factory: @Sendable () throws -> Value

    init(lifetime: InjectionLifetime, type: Any.Type, factory: @escaping @Sendable () throws -> Value) {
        self.factory = factory
        super.init(lifetime: lifetime, type: _AnyType(type))
    }

    override func makeBox() throws -> _Box {
        _Box(try factory())
    }
}

/// The container's entry for one key; mutated only under the container's lock.
final class _Slot {
    let registration: _AnyRegistration
    /// The cached instance for `.scoped` and `.singleton`.
    var cached: _Box?
    /// The build in progress, which other resolutions of this key wait for.
    var build: _Build?
    /// In a `verify()` copy only: why the build of this key was abandoned, so later resolves fail fast.
    var failure: InjectionError?

    init(_ registration: _AnyRegistration) {
        self.registration = registration
    }
}
