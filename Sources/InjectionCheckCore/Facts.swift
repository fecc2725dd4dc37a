/// A place that resolves a type, as the checker reads it.
public struct Resolution: Sendable, Equatable {
    /// The type as written, without `any` and without parentheses around the whole: what a message names.
    public var written: String
    /// The name it is matched by (see ``typeKey(_:modules:)``).
    public var key: String
    /// Whether `any` was written, so that the fix registers `(any T).self`.
    public var isExistential: Bool
    /// The line of the resolving call's name (`Inject`, `resolve`, ...).
    public var line: Int
    /// The column of the resolving call's name.
    public var column: Int
    /// The identifiers the type is made of, to rule out an associated type of an extended protocol.
    public var names: [String]
    /// What the enclosing extensions extend, innermost last.
    public var extensions: [String]
}

/// A class, struct, actor, enum or protocol declared at the top level of a file.
public struct TypeDeclaration: Sendable, Equatable {
    /// `class`, `struct`, `actor`, `enum` or `protocol`.
    public var kind: String
    /// Its name.
    public var name: String
    /// The line of its keyword.
    public var line: Int
    /// The column of its keyword.
    public var column: Int
    /// Whether it is `public` or `open`.
    public var isPublic: Bool
    /// Whether it is `@MainActor`.
    public var isMainActor: Bool
    /// Whether it has generic parameters.
    public var isGeneric: Bool
    /// The keys of the types its inheritance clause lists.
    public var inherits: [String]
    /// The protocols an `// injection-check: implements P` comment on it names.
    public var implements: [String]
}

/// An initializer of a top-level type, in the type's body or in an extension of it.
public struct Initializer: Sendable, Equatable {
    /// The type it initializes.
    public var typeName: String
    /// Whether `TypeName()` calls it: not failable, not generic, and every parameter has a default value.
    public var takesNoArguments: Bool
    /// Whether it is `public` or `open`.
    public var isPublic: Bool
    /// Whether it is `@MainActor` itself.
    public var isMainActor: Bool
    /// Whether it is `async`.
    public var isAsync: Bool
    /// Whether it `throws`.
    public var isThrowing: Bool
}

/// What one file says: what the check and the generator read.
public struct FileFacts: Sendable {
    /// The file's path, as diagnostics print it.
    public var path: String
    /// The module the file belongs to.
    public var module: String
    /// The keys of the types it registers.
    public var registrations: [String] = []
    /// The places it resolves a type.
    public var resolutions: [Resolution] = []
    /// Its typealiases: a name (`Outer.Name` inside a type) and the key of the type it stands for.
    public var typealiases: [String: String] = [:]
    /// The associated types of the protocols it declares.
    public var associatedTypes: [String: [String]] = [:]
    /// Its top-level types.
    public var types: [TypeDeclaration] = []
    /// The protocols its top-level extensions add, by the key of the extended type.
    public var conformances: [String: [String]] = [:]
    /// The initializers of top-level types, in their bodies and extensions.
    public var initializers: [Initializer] = []

    /// Reads a file's facts from its tokens.
    ///
    /// - Parameters:
    ///   - tokens: The file's tokens (``tokenize(_:)``).
    ///   - path: The path diagnostics print.
    ///   - module: The module the file belongs to.
    ///   - modules: Every scanned module: a prefix naming one of them is dropped from type names.
    public init(tokens: SourceTokens, path: String, module: String, modules: Set<String>) {
        (self.path, self.module) = (path, module)
        var reader = FactReader(code: tokens.code, modules: modules)
        var implementsLines: [(line: Int, names: [String])] = []
        for comment in tokens.comments {
            guard let (word, list) = directive(comment.text) else { continue }
            let line = comment.startsLine ? comment.line + 1 : comment.line
            switch word {
            case "ignore": reader.ignoredLines.insert(line)
            case "registers": registrations += typeList(list, modules: modules)
            case "implements": implementsLines.append((comment.line, typeList(list, modules: modules)))
            default: break
            }
        }
        reader.read(into: &self)
        var index = 0
        for (line, names) in implementsLines {
            while index < types.count && types[index].line < line { index += 1 }
            if index < types.count { types[index].implements += names }
        }
    }
}

/// The word and the rest of an `// injection-check: word rest` comment.
private func directive(_ comment: String) -> (String, String)? {
    let text = comment.drop { $0 == "/" || $0 == " " || $0 == "\t" }
    guard text.hasPrefix("injection-check:") else { return nil }
    let words = text.dropFirst("injection-check:".count).drop { $0 == " " || $0 == "\t" }
    let word = words.prefix { $0 != " " && $0 != "\t" && $0 != "," }
    return (String(word), String(words.dropFirst(word.count)))
}

/// The keys of a comma-separated list of types, as a directive writes them.
private func typeList(_ text: String, modules: Set<String>) -> [String] {
    let code = tokenize(Array(text.utf8)).code
    var (keys, start, depth) = ([String](), 0, 0)
    for index in code.indices {
        depth += bracketChange(code, index)
        if depth == 0 && code[index].text == "," {
            keys.append(typeKey(code[start..<index], modules: modules))
            start = index + 1
        }
    }
    keys.append(typeKey(code[start...], modules: modules))
    return keys.filter { !$0.isEmpty }
}

/// How a token changes the bracket depth: +1 for `(`, `[`, `{`, `<`; -1 for their closes (`->` is not one).
func bracketChange(_ code: [Token], _ index: Int) -> Int {
    guard code[index].kind == .punctuation else { return 0 }
    switch code[index].text {
    case "(", "[", "{", "<": return 1
    case ")", "]", "}": return -1
    case ">": return index > 0 && code[index - 1].text == "-" ? 0 : -1
    default: return 0
    }
}

/// The name a type is matched by: the type without `any`, `some`, parentheses and spaces, and without a leading
/// module prefix that names a scanned module (`(any Services.Keychain)` is `Keychain` when `Services` is scanned).
public func typeKey(_ tokens: ArraySlice<Token>, modules: Set<String>) -> String {
    var (key, skipDot) = ("", false)
    for index in tokens.indices {
        let text = tokens[index].text
        if skipDot || ["any", "some", "(", ")"].contains(text) {
            skipDot = false
            continue
        }
        let previous = index > tokens.startIndex ? tokens[index - 1].text : ""
        if tokens[index].kind == .identifier && modules.contains(text) && previous != "."
            && index + 1 < tokens.endIndex && tokens[index + 1].text == "." {
            skipDot = true
            continue
        }
        key += text
    }
    return key
}

/// A type as a message writes it: without `any` and `some`, and without parentheses around the whole.
func writtenType(_ tokens: ArraySlice<Token>) -> String {
    var parts = tokens.filter { $0.text != "any" && $0.text != "some" }
    while parts.count > 1, parts.first?.text == "(", parts.last?.text == ")", enclosesAll(parts) {
        parts = Array(parts.dropFirst().dropLast())
    }
    var text = ""
    for (index, token) in parts.enumerated() {
        switch token.text {
        case ",": text += ", "
        case "&": text += " & "
        case "-" where index + 1 < parts.count && parts[index + 1].text == ">": text += " -"
        case ">" where index > 0 && parts[index - 1].text == "-": text += "> "
        default: text += token.text
        }
    }
    return text
}

/// Whether the first token, an opening parenthesis, closes only at the last.
private func enclosesAll(_ parts: [Token]) -> Bool {
    var depth = 0
    for index in parts.indices {
        depth += bracketChange(parts, index)
        if depth == 0 && index < parts.count - 1 { return false }
    }
    return true
}
