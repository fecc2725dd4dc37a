/// Readable type names for one container's messages and graph.
///
/// A name is the one a user writes (`API`, `(String) -> Detail`), qualified by its module
/// (`Payments.API`) only when another type registered in the same container has the same short
/// name. A `private` or `fileprivate` type, which the runtime places in an "unknown context at $address",
/// is named without that address; if it still shares its name with another registered type, the file
/// that registered it tells them apart (`App.Cache (private, registered in App/Store.swift)`).
/// Registering only remembers the type and file; names are worked out when a message or graph needs them.
final class TypeNames: @unchecked Sendable {  // Its state: under `lock`.
    private let lock = Lock()
    private var registered: [ObjectIdentifier: (type: Any.Type, file: StaticString)] = [:]
    /// Short name → the qualified names of registered types with it; `nil` after a new registration.
    private var qualifiedNames: [String: [String]]?

    init() {}

    init(copying other: TypeNames) {
        registered = other.lock.withLock { other.registered }
    }

    /// Remembers a registered type and the file that registered it, so a later type with the same short
    /// name is told apart.
    func noteRegistered(_ type: Any.Type, file: StaticString) {
        lock.withLock {
            // A new type invalidates the names; the same type again (a re-registration) does not.
            if registered.updateValue((type, file), forKey: ObjectIdentifier(type)) == nil { qualifiedNames = nil }
        }
    }

    /// The readable name of `type`.
    func name(_ type: AnyType) -> String { name(of: type.type) }

    /// The readable name of `type`.
    func name(of type: Any.Type) -> String {
        let short = Self.readable(String(describing: type)), qualified = Self.readable(String(reflecting: type))
        let (others, file) = lock.withLock { () -> ([String], String?) in
            if qualifiedNames == nil {
                var names: [String: [String]] = [:]
                for (type, _) in registered.values {
                    names[Self.readable(String(describing: type)), default: []].append(Self.readable(String(reflecting: type)))
                }
                qualifiedNames = names
            }
            return (qualifiedNames![short] ?? [], registered[ObjectIdentifier(type)].map { "\($0.file)" })
        }
        // Another type with the same readable qualified name: two private types, in different files.
        let twins = others.filter { $0 == qualified }.count - (file == nil ? 0 : 1)
        if twins > 0 { return qualified + " (private, registered in \(file ?? "no file: not registered"))" }
        return Set(others + [qualified]).count > 1 ? qualified : short
    }

    /// Whether `type` is `private` or `fileprivate` (or local), so its name can be written only where it is declared.
    static func isPrivate(_ type: Any.Type) -> Bool {
        readable(String(reflecting: type)).utf8.count != String(reflecting: type).utf8.count
    }

    /// `name` without the runtime's "(unknown context at $…)." segments, which name an address, not a place.
    static func readable(_ name: String) -> String {
        let marker = Array("(unknown context at ".utf8)
        let bytes = Array(name.utf8)
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == marker[0], bytes[index...].starts(with: marker),
               let close = bytes[index...].firstIndex(of: UInt8(ascii: ")")) {
                index = close + 1
                if index < bytes.count, bytes[index] == UInt8(ascii: ".") { index += 1 }
                continue
            }
            kept.append(bytes[index])
            index += 1
        }
        return String(decoding: kept, as: UTF8.self)
    }

    /// `name` as an expression prefix for `.self`: function types need parentheses.
    static func literal(_ name: String) -> String {
        // Character by character: `String.contains(_: some StringProtocol)` needs iOS 16 without Foundation.
        let isFunction = zip(name, name.dropFirst()).contains { $0 == "-" && $1 == ">" }
        return isFunction || name.contains(" ") ? "(\(name))" : name
    }
}

/// Lets a message see through `Optional<Wrapped>` to suggest the non-optional type.
protocol OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
}
