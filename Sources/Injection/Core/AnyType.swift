/// What is registered and resolved, and its identity: a type, a typed key (`InjectionKey`) that stands for
/// its `Value`, or a ``Builder`` model type, whose registration holds its build closure. One word: the
/// type's metadata address, with bit 0 (always clear in an address) set for a key and bit 1 for a builder,
/// so a class that is also an `InjectionKey` or a `Builder` has one identity per role. Stored in
/// `Sendable` types; never used to build values.
package struct AnyType: Hashable, Sendable {
    package let bits: UInt

    /// The type itself (`isKey`: a typed key; `isBuilder`: a builder model type).
    @inline(__always) package init(_ type: Any.Type, isKey: Bool = false, isBuilder: Bool = false) {
        bits = UInt(bitPattern: ObjectIdentifier(type)) | (isKey ? 1 : 0) | (isBuilder ? 2 : 0)
    }

    /// The registered type `Value` itself, given as `type`, which must be `Value.self`: a subclass's metatype
    /// passed as a `Base.Type` names one type while the factory makes another, and a registration keyed on the
    /// one would hand out the other's values. (A resolve needs no check: what it returns for the subclass is a
    /// `Base` too. An `Any.Type` or `any P.Type` is opened: `Value` is the type it names.)
    init<Value>(exactly type: Value.Type) {
        precondition(ObjectIdentifier(type) == ObjectIdentifier(Value.self), """
            Injection: got \(type).self as a \(Value.self).Type: the instance would not be a \(type). Pass the type \
            itself, e.g. register(\(Value.self).self) { ... }, or call it from code generic over \(type).
            """)
        self.init(Value.self)
    }

    /// The identity whose word is `bits` (a table's key).
    init(bits: UInt) { self.bits = bits }

    /// A typed key.
    init(key: Any.Type) { self.init(key, isKey: true) }

    /// A builder model type.
    init(builder: Any.Type) { self.init(builder, isBuilder: true) }

    /// The type, the key type or the builder type.
    var type: Any.Type { unsafeBitCast(bits & ~3, to: Any.Type.self) }
    /// Whether `type` is an `InjectionKey` standing for its `Value`, rather than the type itself.
    var isKey: Bool { bits & 1 != 0 }
    /// Whether `type` is a ``Builder`` model, registered with its build closure.
    var isBuilder: Bool { bits & 2 != 0 }
}
