/// What is registered and resolved: a type, or a typed key (`InjectionKey`) that stands for its `Value`.
/// Stored in `Sendable` types; never used to build values.
struct _AnyType: @unchecked Sendable, Hashable {
    /// The type, or the key type.
    let type: Any.Type
    /// Whether `type` is an `InjectionKey` standing for its `Value`, rather than the type itself.
    let isKey: Bool

    /// The type itself.
    init(_ type: Any.Type) {
        self.type = type
        isKey = false
    }

    /// A typed key.
    init(key: Any.Type) {
        self.type = key
        isKey = true
    }

    /// The registration's identity: a key's differs from its type's, even for a class that is both.
    var id: _TypeID { _TypeID(type, isKey: isKey) }

    static func == (lhs: _AnyType, rhs: _AnyType) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// The identity of a registration: the type's metadata address, with the low bit (always clear in an
/// address) set for a key, so a class that is also an `InjectionKey` has two identities.
struct _TypeID: Hashable, Sendable {
    let bits: UInt

    @inline(__always)
    init(_ type: Any.Type, isKey: Bool) {
        bits = UInt(bitPattern: ObjectIdentifier(type)) | (isKey ? 1 : 0)
    }
}

/// Readable type names for one container's messages and graph.
///
/// A name is the one a user writes (`API`, `(String) -> Detail`), qualified by its module
/// (`Payments.API`) only when another type registered in the same container has the same short
/// name. Registering only remembers the type; names are worked out when a message or graph needs them.
final class _TypeNames: @unchecked Sendable {
    private let lock = _Lock()
    private var registered: [ObjectIdentifier: Any.Type] = [:]
    /// Short name → the qualified names of registered types with it; `nil` after a new registration.
    private var qualifiedNames: [String: Set<String>]?

    init() {}

    init(copying other: _TypeNames) {
        registered = other.lock.withLock { other.registered }
    }

    /// Remembers a registered type, so a later type with the same short name is told apart.
    func noteRegistered(_ type: Any.Type) {
        lock.withLock {
            if registered.updateValue(type, forKey: ObjectIdentifier(type)) == nil { qualifiedNames = nil }
        }
    }

    /// The readable name of `type`.
    func name(_ type: _AnyType) -> String { name(of: type.type) }

    /// The readable name of `type`.
    func name(of type: Any.Type) -> String {
        let short = String(describing: type), qualified = String(reflecting: type)
        let others = lock.withLock { () -> Set<String> in
            if qualifiedNames == nil {
                var names: [String: Set<String>] = [:]
                for type in registered.values { names[String(describing: type), default: []].insert(String(reflecting: type)) }
                qualifiedNames = names
            }
            return qualifiedNames![short] ?? []
        }
        return others.union([qualified]).count > 1 ? qualified : short
    }

    /// `name` as an expression prefix for `.self`: function types need parentheses.
    static func literal(_ name: String) -> String {
        // Character by character: `String.contains(_: some StringProtocol)` needs iOS 16 without Foundation.
        let isFunction = zip(name, name.dropFirst()).contains { $0 == "-" && $1 == ">" }
        return isFunction || name.contains(" ") ? "(\(name))" : name
    }
}

/// Lets a message see through `Optional<Wrapped>` to suggest the non-optional type.
protocol _OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: _OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
}
