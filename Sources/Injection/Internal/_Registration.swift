/// An instance held by the container; typed, so a cache hit needs `unsafeDowncast`, never `as!`.
final class _Box<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A registered factory and its lifetime. A new registration is a new object, so identity tells
/// whether a build is still current.
class _AnyRegistration: @unchecked Sendable {
    let lifetime: InjectionLifetime
    let typeName: String

    init(lifetime: InjectionLifetime, typeName: String) {
        self.lifetime = lifetime
        self.typeName = typeName
    }

    /// Runs the factory and boxes its result in a `_Box<Value>`.
    func makeBox() throws -> AnyObject {
        fatalError("Injection: _AnyRegistration.makeBox must be overridden")
    }
}

final class _Registration<Value>: _AnyRegistration, @unchecked Sendable {
    let factory: @Sendable () throws -> Value

    init(lifetime: InjectionLifetime, typeName: String, factory: @escaping @Sendable () throws -> Value) {
        self.factory = factory
        super.init(lifetime: lifetime, typeName: typeName)
    }

    override func makeBox() throws -> AnyObject {
        _Box(try factory())
    }
}

/// The container's entry for one key; mutated only under the container's lock.
final class _Slot {
    let registration: _AnyRegistration
    /// The cached `_Box<Value>` for `.scoped` and `.singleton`.
    var cached: AnyObject?
    /// The build in progress, which other resolutions of this key wait for.
    var build: _Build?

    init(_ registration: _AnyRegistration) {
        self.registration = registration
    }
}
