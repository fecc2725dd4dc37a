/// A metatype that can be stored in `Sendable` types: a type's identity, never used to build values.
struct _AnyType: @unchecked Sendable, Hashable {
    let type: Any.Type
    init(_ type: Any.Type) { self.type = type }

    var id: ObjectIdentifier { ObjectIdentifier(type) }
    /// The readable name; see `_TypeName`.
    var name: String { _TypeName.of(type) }

    static func == (lhs: _AnyType, rhs: _AnyType) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Readable type names for messages and graphs.
///
/// A name is the one a user writes (`API`, `(String) -> Detail`), qualified by its module
/// (`Payments.API`) only when another registered type has the same short name.
enum _TypeName {
    private static let lock = _Lock()
    /// Short name → the module-qualified names of registered types that have it.
    nonisolated(unsafe) private static var qualifiedNames: [String: Set<String>] = [:]

    /// Remembers a registered type's names, so a later type with the same short name is told apart.
    static func noteRegistered(_ type: Any.Type) {
        let short = String(describing: type), qualified = String(reflecting: type)
        lock.withLock { _ = qualifiedNames[short, default: []].insert(qualified) }
    }

    /// The readable name of `type`.
    static func of(_ type: Any.Type) -> String {
        let short = String(describing: type), qualified = String(reflecting: type)
        let isAmbiguous = lock.withLock { qualifiedNames[short, default: []].union([qualified]).count > 1 }
        return isAmbiguous ? qualified : short
    }

    /// `name` as an expression prefix for `.self`: function types need parentheses.
    static func literal(_ name: String) -> String {
        name.contains("->") || name.contains(" ") ? "(\(name))" : name
    }
}

/// Lets a message see through `Optional<Wrapped>` to suggest the non-optional type.
protocol _OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: _OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
}
