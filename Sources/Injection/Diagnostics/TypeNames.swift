/// Readable type names for one container's messages and graph.
///
/// A name is the one a user writes (`API`, `Profile.Service`, `(String) -> Detail`), qualified by its module
/// (`Payments.API`) only when another type registered in the same container has the same short
/// name. A `private` or `fileprivate` type, which the runtime places in an "unknown context at $address",
/// is named without that address; if it still shares its name with another registered type, the file
/// that registered it tells them apart (`App.Cache (private, registered in App/Store.swift)`).
/// The names are worked out from the container's registrations when a message or graph needs them, and
/// kept until the registrations change: registering costs nothing here.
package final class TypeNames: Sendable {
    /// The names worked out for the registrations of one ``ContainerState/generation``: short name → the
    /// qualified names of the registered types with it; the file that registered each type; the types
    /// registered in more than one role (as themselves, as a key, as a builder).
    private typealias Cache = (
        generation: UInt64, qualifiedNames: [String: [String]], files: [ObjectIdentifier: String], multiRole: Set<ObjectIdentifier>
    )

    /// A type's names: as code outside its module writes it, and qualified by its module.
    private typealias Spelling = (written: String, qualified: String)

    /// Each type's names, worked out once for the process (a type's name never changes): a change of
    /// the registrations, or a new container with the same types (a copy, as `.isolatedInjection` makes
    /// for each test), costs a lookup per registered type, not a `String(reflecting:)` and a parse,
    /// which made alternating registers and failing resolves quadratic in the names worked out.
    private static let spelled = LockedState<[ObjectIdentifier: Spelling]>([:])

    private let state: LockedState<ContainerState>
    /// The names worked out last, and how many types' names this container worked out (a test probe).
    private let worked = LockedState((cache: Cache?.none, spellings: 0))

    /// The names of the types registered in `state`.
    init(_ state: LockedState<ContainerState>) { self.state = state }

    /// The readable name of `type`.
    func name(_ type: AnyType) -> String { name(of: type.type) }

    /// The name of `type`'s node in the graph: its ``name(_:)``, and its role when the same type is
    /// registered in another role too (`Config (key)`), so each registration is a node of its own.
    func nodeName(_ type: AnyType) -> String {
        guard type.isKey || type.isBuilder, current().multiRole.contains(ObjectIdentifier(type.type)) else { return name(type) }
        return name(type) + (type.isKey ? " (key)" : " (builder)")
    }

    /// The readable name of `type`.
    func name(of type: Any.Type) -> String {
        let cache = current()
        let (short, qualified) = Self.spelled.withLock { $0[ObjectIdentifier(type)] } ?? Self.spelling(of: type)
        let others = cache.qualifiedNames[short] ?? [], file = cache.files[ObjectIdentifier(type)]
        // Another type with the same readable qualified name: two private types, in different files.
        let twins = others.filter { $0 == qualified }.count - (file == nil ? 0 : 1)
        if twins > 0 { return qualified + " (private, registered in \(file ?? "no file: not registered"))" }
        return Set(others + [qualified]).count > 1 ? qualified : short
    }

    /// How many types' names this container worked out, not found already worked out for the process.
    package var spellingsWorkedOut: Int { worked.withLock { $0.spellings } }

    private static func spelling(of type: Any.Type) -> Spelling { (written(type), readable(String(reflecting: type))) }

    /// The names for the current registrations. Takes its own lock, the container's and ``spelled``'s, one after
    /// the other, never one inside another, and none while it spells a type.
    private func current() -> Cache {
        let known = worked.withLock { $0.cache }
        let (generation, registrations) = state.withLock { state in
            (state.generation, known?.generation == state.generation ? nil : state.registrations)
        }
        if let known, registrations == nil { return known }
        var files: [ObjectIdentifier: String] = [:], names: [String: [String]] = [:]
        var multiRole: Set<ObjectIdentifier> = [], new: [ObjectIdentifier: Spelling] = [:]
        // Worked out with no lock held, from a snapshot of the process's spellings (copy-on-write: taking it
        // copies nothing): spelling thousands of new types takes seconds, and the process-wide lock held that
        // long stalled every other container's messages, and the tests waiting on them.
        let spelled = Self.spelled.withLock { $0 }
        for registration in registrations ?? [] {
            let type = ObjectIdentifier(registration.type.type)
            // A class registered both as itself and as a key is one type.
            guard files.updateValue(registration.file.description, forKey: type) == nil else {
                multiRole.insert(type)
                continue
            }
            let spelling = spelled[type] ?? Self.spelling(of: registration.type.type)
            if spelled[type] == nil { new[type] = spelling }
            names[spelling.written, default: []].append(spelling.qualified)
        }
        // Counted where this container is the first to add them: another may have worked out the same meanwhile.
        let spellings = new.isEmpty ? 0 : Self.spelled.withLock { spelled in
            new.filter { spelled.updateValue($0.value, forKey: $0.key) == nil }.count
        }
        let fresh: Cache = (generation, names, files, multiRole)
        worked.withLock { $0 = (fresh, $0.spellings + spellings) }
        return fresh
    }

    // MARK: Spelling

    /// Whether `type` is `private` or `fileprivate` (or local), so its name can be written only where it is declared.
    static func isPrivate(_ type: Any.Type) -> Bool {
        readable(String(reflecting: type)).utf8.count != String(reflecting: type).utf8.count
    }

    /// `type` as code outside its module writes it: its qualified name (``readable(_:)``) with each type's
    /// module left out, and the types it is nested in kept (`Profile.Service`, where the runtime's short name
    /// is `Service`, which does not compile outside `Profile`).
    static func written(_ type: Any.Type) -> String {
        // Each run of identifiers joined by dots names a type from its module on (`App.Profile.Service`,
        // `Swift.Int`); a run that starts with a dot continues the one before a generic's arguments
        // (`App.Outer<Swift.Int>.Inner`), and one without a dot is a word (`throws`, a tuple label).
        var written: [UInt8] = [], run: [UInt8] = []
        // A space at the end ends the last run; it is dropped again below.
        for byte in readable(String(reflecting: type)).utf8 + [UInt8(ascii: " ")] {
            let isWord = byte >= 0x80 || "_.$".utf8.contains(byte) || (0x30...0x39).contains(byte)
                || (0x61...0x7A).contains(byte | 0x20)
            if isWord {
                run.append(byte)
                continue
            }
            // The run ends: it keeps what follows its module's name, if it starts with one.
            let dot = run.first == UInt8(ascii: ".") ? nil : run.firstIndex(of: UInt8(ascii: "."))
            written += run[(dot.map { $0 + 1 } ?? 0)...] + [byte]
            run = []
        }
        return String(decoding: written.dropLast(), as: UTF8.self)
    }

    /// `name` without the runtime's "(unknown context at $…)." segments, which name an address, not a place.
    static func readable(_ name: String) -> String {
        // Each part after a "(" that opens such a segment keeps what follows its ")", and its "." if any.
        let parts = name.utf8.split(separator: UInt8(ascii: "("), omittingEmptySubsequences: false)
        var kept = Array(parts[0])
        for part in parts.dropFirst() {
            if part.starts(with: "unknown context at ".utf8), let close = part.firstIndex(of: UInt8(ascii: ")")) {
                let rest = part[part.index(after: close)...]
                kept += rest.first == UInt8(ascii: ".") ? rest.dropFirst() : rest
            } else { kept += [UInt8(ascii: "(")] + part }
        }
        return String(decoding: kept, as: UTF8.self)
    }

    /// `type`, named `name`, as an expression prefix for `.self` in a suggested fix: `(any P)` for a
    /// protocol (existential) type, as Swift 6 code spells it; `(name)` for a function type, or a name with
    /// a space; else `name`.
    static func literal(_ type: Any.Type, named name: String) -> String {
        // An existential's metatype prints as `P.Protocol`; a concrete type's as `T.Type`.
        let isExistential = String(describing: Swift.type(of: type)).hasSuffix(".Protocol")
        if isExistential && name != "Any" && name != "AnyObject" { return "(any \(name))" }
        // Character by character: `String.contains(_: some StringProtocol)` needs iOS 16 without Foundation.
        let isFunction = zip(name, name.dropFirst()).contains { $0 == "-" && $1 == ">" }
        return isFunction || name.contains(" ") ? "(\(name))" : name
    }
}

/// Lets a message see through `Optional<Wrapped>` to suggest the non-optional type, and the resolver
/// tell a `nil` result, which it never caches.
protocol OptionalType {
    static var wrappedType: Any.Type { get }
    var isNil: Bool { get }
    /// The wrapped value's class instance (see `Box.object(of:)`), or `nil`.
    var wrappedObject: AnyObject? { get }
}

extension Optional: OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
    /// `nil`, or an optional of an optional that is `nil` inside (`.some(nil)`): nothing to keep either way.
    var isNil: Bool { self.map { _isOptional(Wrapped.self) && (($0 as? any OptionalType)?.isNil ?? false) } ?? true }
    var wrappedObject: AnyObject? { self.flatMap { Box.object(of: $0) } }
}
