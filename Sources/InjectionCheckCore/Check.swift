import Foundation

/// The configuration, `injection-check.json` at the package root; every key is optional.
///
/// ```json
/// {
///     "severity": "warning",
///     "registeredElsewhere": ["AnalyticsClient"],
///     "include": ["../AppModules/Sources"],
///     "exclude": ["**/Generated/**"]
/// }
/// ```
public struct Configuration: Sendable, Equatable {
    /// `error` (the default) or `warning`: what an unregistered resolution prints.
    public var severity = "error"
    /// Types registered where the check cannot see: a binary framework, code generated at build time.
    public var registeredElsewhere: [String] = []
    /// More folders to scan, relative to the configuration's folder: for Xcode projects.
    public var include: [String] = []
    /// Globs of files not to scan, relative to the configuration's folder.
    public var exclude: [String] = []

    /// The default configuration.
    public init() {}

    /// Reads a configuration from JSON.
    ///
    /// - Throws: A ``UsageError`` naming the key that is unknown or holds the wrong type.
    public init(json: Data) throws(UsageError) {
        guard let object = try? JSONSerialization.jsonObject(with: json), let keys = object as? [String: Any] else {
            throw UsageError("the configuration is not a JSON object")
        }
        for (key, value) in keys {
            let strings = value as? [String]
            switch key {
            case "severity":
                guard let value = value as? String, ["error", "warning"].contains(value) else {
                    throw UsageError("\"severity\" must be \"error\" or \"warning\"")
                }
                severity = value
            case "registeredElsewhere", "include", "exclude":
                guard let strings else { throw UsageError("\"\(key)\" must be an array of strings") }
                if key == "registeredElsewhere" { registeredElsewhere = strings }
                else if key == "include" { include = strings } else { exclude = strings }
            default:
                throw UsageError("unknown key \"\(key)\"; the keys are severity, registeredElsewhere, include and "
                    + "exclude")
            }
        }
    }
}

/// A usage or configuration error: the tool exits with status 2.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public var description: String
    /// An error that says `message`.
    public init(_ message: String) { description = message }
}

/// What the scanned files register, matched through their typealiases.
///
/// A type is registered by `register`, `registerAsync`, `unsafeRegister` or `.implements` in any file, by an
/// `// injection-check: registers T` comment, or by `registeredElsewhere`.
public struct Registry: Sendable {
    /// Every typealias of the scanned files: a name and the key it stands for.
    public let aliases: [String: String]
    /// The keys of the registered types, each through its typealiases (``canonical(_:)``).
    public let registered: Set<String>

    /// The registrations of `files`, and the types of `registeredElsewhere` (in which a module prefix that names
    /// one of `modules` is dropped).
    public init(files: [FileFacts], registeredElsewhere: [String] = [], modules: Set<String>) {
        let aliases = files.reduce(into: [:]) { $0.merge($1.typealiases) { first, _ in first } }
        let elsewhere = registeredElsewhere.map { typeKey(tokenize(Array($0.utf8)).code[...], modules: modules) }
        self.aliases = aliases
        registered = Set((files.flatMap(\.registrations) + elsewhere).map { Self.follow($0, aliases) })
    }

    /// The key a typealias stands for, followed through every typealias (`Store` is `DataStore` after
    /// `typealias Store = any DataStore`); other keys as they are.
    public func canonical(_ key: String) -> String { Self.follow(key, aliases) }

    private static func follow(_ key: String, _ aliases: [String: String]) -> String {
        var key = key
        for _ in 0..<16 {
            guard let next = aliases[key], next != key else { break }
            key = next
        }
        return key
    }
}

/// The `PATH:LINE:COLUMN: error:` lines for every resolution of a type that no scanned code registers.
///
/// A resolution of a generic parameter, or of an associated type of an enclosing declaration, never is one.
/// - Parameters:
///   - files: The facts of every scanned file.
///   - registeredElsewhere: Types to count as registered.
///   - modules: The scanned modules (a module prefix in `registeredElsewhere` names is dropped).
///   - severity: `error` or `warning`.
/// - Returns: One line per unregistered resolution, in the order of `files` and of each file's lines.
public func unregisteredResolutions(in files: [FileFacts], registeredElsewhere: [String] = [], modules: Set<String>,
                                    severity: String = "error") -> [String] {
    let registry = Registry(files: files, registeredElsewhere: registeredElsewhere, modules: modules)
    let associatedTypes = files.reduce(into: [String: [String]]()) { $0.merge($1.associatedTypes) { $0 + $1 } }
    var lines: [String] = []
    for file in files {
        for site in file.resolutions where !registry.registered.contains(registry.canonical(site.key)) {
            let associated = Set(site.extensions.flatMap { associatedTypes[$0] ?? [] })
            guard !site.names.contains(where: associated.contains) else { continue }
            let metatype = site.isExistential ? "(any \(site.written))" : site.written
            lines.append("\(file.path):\(site.line):\(site.column): \(severity): Injection: \(site.written) is "
                + "resolved here, but no scanned code registers it. Register it at launch: InjectionManager.register("
                + "\(metatype).self) { ... }. If it is registered where the check cannot see, add \"\(site.written)\" "
                + "to \"registeredElsewhere\" in injection-check.json, or end this line with "
                + "// injection-check: ignore")
        }
    }
    return lines
}
