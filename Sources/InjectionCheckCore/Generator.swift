import Foundation

/// What `injection-check generate` makes of the scanned files.
public struct Generation: Sendable, Equatable {
    /// The Swift file to write: `extension InjectionManager { static func registerInjections() }`.
    public var source: String
    /// The `note:` lines for pairs skipped, and the `error:` lines for protocols with two implementations.
    public var messages: [String]
    /// Whether any message is an error: then the file is not written.
    public var hasErrors: Bool
}

/// Finds each protocol `P` and its implementation `PImpl` (or a type marked `// injection-check: implements P`),
/// and writes a registration for each pair it can confirm compiles.
///
/// A pair needs `PImpl` to be a class, struct or actor that lists `P` in its inheritance clause or in an extension,
/// and to have an initializer that `PImpl()` calls. Outside `outputModule`, `P`, `PImpl` and that initializer must
/// be `public` or `open`. Anything else is skipped with a `note:`; two implementations of one protocol are an
/// `error:`. The registrations are sorted by protocol, so the file changes only when the pairs do.
/// - Parameters:
///   - files: The facts of every scanned file.
///   - outputModule: The module the generated file belongs to.
/// - Returns: The file, and what to print.
public func generateRegistrations(from files: [FileFacts], outputModule: String) -> Generation {
    typealias Located = (type: TypeDeclaration, file: FileFacts)
    var protocols: [String: Located] = [:], conformances: [String: [String]] = [:]
    var initializers: [String: [Initializer]] = [:], implementations: [String: [Located]] = [:]
    var messages: [(path: String, line: Int, text: String)] = [], hasErrors = false
    func say(_ located: Located, _ kind: String, _ message: String) {
        let (path, type) = (located.file.path, located.type)
        messages.append((path, type.line, "\(path):\(type.line):\(type.column): \(kind): Injection: \(message)"))
    }
    func note(_ located: Located, _ message: String) { say(located, "note", message) }
    for file in files {
        conformances.merge(file.conformances) { $0 + $1 }
        initializers.merge(Dictionary(grouping: file.initializers, by: \.typeName)) { $0 + $1 }
        for type in file.types where type.kind == "protocol" && protocols[type.name] == nil {
            protocols[type.name] = (type, file)
        }
    }
    for file in files {
        for type in file.types where ["class", "struct", "actor"].contains(type.kind) {
            let listed = type.inherits + (conformances[type.name] ?? [])
            for name in type.implements where protocols[name] == nil {
                note((type, file), "skipped \(type.name): it implements \(name), which is no protocol of the scanned "
                    + "code")
            }
            var pairs = type.implements.filter { protocols[$0] != nil }
            let named = String(type.name.dropLast(4))
            if type.name.hasSuffix("Impl"), protocols[named] != nil, !pairs.contains(named) {
                if listed.contains(named) { pairs.append(named) } else {
                    note((type, file), "skipped \(type.name): it does not list \(named) in its inheritance clause "
                        + "or an extension")
                }
            }
            for name in pairs { implementations[name, default: []].append((type, file)) }
        }
    }
    var lines: [String] = [], imports: Set = ["Injection"]
    for (name, found) in implementations.sorted(by: { $0.key < $1.key }) {
        let (type, file) = found[0], protocolFile = protocols[name]!
        if found.count > 1 {
            hasErrors = true
            let others = found.dropFirst().map { "\($0.type.name) (\($0.file.path):\($0.type.line))" }
            say(found[0], "error", "\(name) has more than one implementation: \(type.name) and "
                + "\(others.joined(separator: ", ")); keep one, or register it by hand")
            continue
        }
        let initializer = (initializers[type.name] ?? []).first { $0.takesNoArguments }
        let crossModule = file.module != outputModule
        let reason: String? = if type.isGeneric { "it is generic" } else if initializer == nil {
            "it has no init() (or an initializer whose parameters all have default values), so \(type.name)() "
                + "cannot be confirmed"
        } else if crossModule && !(type.isPublic && protocolFile.type.isPublic && initializer!.isPublic) {
            "it is in module \(file.module), so \(name), \(type.name) and its init() must be public"
        } else { nil }
        if let reason {
            note((type, file), "skipped \(type.name) for \(name): \(reason)")
            continue
        }
        let (isAsync, isThrowing) = (initializer!.isAsync, initializer!.isThrowing)
        let call = (isThrowing ? "try " : "") + (isAsync ? "await " : "") + "\(type.name)()"
        let isMainActor = (type.isMainActor || initializer!.isMainActor) && !isAsync
        let function = isAsync ? "registerAsync" : "register"
        let isolation = isMainActor ? ", isolation: MainActor.shared" : ""
        lines.append("        InjectionManager.\(function)((any \(name)).self\(isolation)) { \(call) }")
        imports.formUnion([file.module, protocolFile.file.module].filter { $0 != outputModule })
    }
    let source = """
        // Generated by `injection-check generate` (`swift package generate-registrations`). Do not edit: run it again.

        \(imports.sorted().map { "import \($0)" }.joined(separator: "\n"))

        extension InjectionManager {
            /// Registers each protocol of the scanned modules with its implementation; call it once at launch.
            static func registerInjections() {
        \(lines.joined(separator: "\n"))
            }
        }

        """
    return Generation(
        source: source.replacingOccurrences(of: "{\n\n    }", with: "{\n    }"),
        messages: messages.sorted { ($0.path, $0.line) < ($1.path, $1.line) }.map(\.text), hasErrors: hasErrors)
}
