/// Walks a file's code tokens once, keeping the braces' scopes, and records what ``FileFacts`` holds.
struct FactReader {
    /// A `{ }` scope: the generic parameters and associated types it declares, and what it belongs to.
    struct Scope {
        var names: [String] = []
        var typeName: String?
        var extended: String?
        var isProtocol = false
        /// The bracket depth where the declaration began: only a `{` at that depth opens its body.
        var depth = 0
    }

    let code: [Token]
    let modules: Set<String>
    var ignoredLines: Set<Int> = []
    var scopes = [Scope()]
    var pending: Scope?
    var depth = 0

    init(code: [Token], modules: Set<String>) { (self.code, self.modules) = (code, modules) }

    /// The words the reader acts on, each looked up once per identifier.
    enum Word { case function, type, `extension`, associatedType, typeAlias, registering, resolving, injecting }
    static let words: [String: Word] = [
        "func": .function, "init": .function, "subscript": .function, "class": .type, "struct": .type, "enum": .type,
        "actor": .type, "protocol": .type, "extension": .extension, "associatedtype": .associatedType,
        "typealias": .typeAlias, "register": .registering, "registerAsync": .registering,
        "unsafeRegister": .registering, "implements": .registering, "resolve": .resolving,
        "resolveAsync": .resolving, "prepare": .resolving, "Inject": .injecting, "InjectLazy": .injecting,
        "InjectProvider": .injecting,
    ]
    static let managers: Set = ["InjectionManager", "InjectionContainer", "Injection.InjectionManager",
                                "Injection.InjectionContainer"]
    static let modifiers: Set = ["public", "open", "internal", "private", "fileprivate", "package", "final", "indirect",
                                 "nonisolated", "convenience", "required", "override", "distributed", "dynamic"]
    static let typePrefixes: Set = ["any", "some", "inout", "sending", "borrowing", "consuming", "each"]
    static let notTypeNames = modifiers.union(["func", "var", "let", "subscript", "init", "static", "case",
                                               "typealias"])

    func text(_ index: Int) -> String { index >= 0 && index < code.count ? code[index].text : "" }
    func isIdentifier(_ index: Int) -> Bool { index >= 0 && index < code.count && code[index].kind == .identifier }

    /// The index of the bracket that closes the one at `open`, within a few hundred tokens.
    func close(_ open: Int) -> Int? {
        var depth = 0
        for index in open..<min(code.count, open + 400) {
            depth += bracketChange(code, index)
            if depth == 0 { return index }
            if depth < 0 { return nil }
        }
        return nil
    }

    mutating func read(into facts: inout FileFacts) {
        for index in code.indices {
            let token = code[index]
            if token.kind == .punctuation {
                switch token.text.utf8.first {
                case UInt8(ascii: "("), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: ")"), UInt8(ascii: "]"): depth = max(0, depth - 1)
                case UInt8(ascii: "{"):
                    if let scope = pending, scope.depth == depth {
                        scopes.append(scope)
                        pending = nil
                    } else {
                        scopes.append(Scope())
                    }
                case UInt8(ascii: "}"):
                    if scopes.count > 1 { scopes.removeLast() }
                    if pending?.depth == depth { pending = nil }
                default: break
                }
                continue
            }
            guard token.kind == .identifier, let word = Self.words[token.text] else { continue }
            // `.init(`, `super.init()`: a member, not a declaration.
            if text(index - 1) == "." && [.function, .type, .extension].contains(word) { continue }
            switch word {
            case .function:
                var open = index + 1
                if token.text == "func" { open += 1 } else if ["?", "!"].contains(text(open)) { open += 1 }
                pending = Scope(names: genericNames(open), depth: depth)
                if token.text == "init" { initializer(index, into: &facts) }
            case .type: typeDeclaration(index, into: &facts)
            case .extension: extensionDeclaration(index, into: &facts)
            case .associatedType where scopes.last?.isProtocol == true && isIdentifier(index + 1):
                scopes[scopes.count - 1].names.append(text(index + 1))
                facts.associatedTypes[scopes.last?.typeName ?? "", default: []].append(text(index + 1))
            case .typeAlias where text(index + 2) == "=": typeAlias(index, into: &facts)
            case .registering: registration(index, into: &facts)
            case .resolving, .injecting: resolution(index, into: &facts)
            default: break
            }
        }
    }

    /// The generic parameters in `<...>` at `open`, if there is one.
    func genericNames(_ open: Int) -> [String] {
        guard text(open) == "<", let end = close(open) else { return [] }
        var (names, depth) = ([String](), 0)
        for index in open..<end {
            depth += bracketChange(code, index)
            let previous = text(index - 1) == "each" ? text(index - 2) : text(index - 1)
            if depth == 1 && isIdentifier(index) && text(index) != "each" && ["<", ","].contains(previous) {
                names.append(text(index))
            }
        }
        return names
    }

    /// The keys of the types in an inheritance clause at `colon`, up to its `{` or `where`.
    func inheritance(_ colon: Int) -> [String] {
        guard text(colon) == ":" else { return [] }
        var (keys, start, depth, index) = ([String](), colon + 1, 0, colon + 1)
        while index < min(code.count, colon + 100) && depth >= 0 && Self.words[text(index)] == nil
            && !(depth == 0 && ["{", "where"].contains(text(index))) {
            if depth == 0 && text(index) == "," {
                keys.append(typeKey(code[start..<index], modules: modules))
                start = index + 1
            }
            depth += bracketChange(code, index)
            index += 1
        }
        return keys + [typeKey(code[start..<index], modules: modules)]
    }

    /// Whether the declaration at `keyword` is `public`/`open`, and whether it is `@MainActor`.
    func attributes(_ keyword: Int) -> (isPublic: Bool, isMainActor: Bool) {
        var (index, isPublic, isMainActor) = (keyword - 1, false, false)
        while index >= 0 {
            if text(index) == ")", let open = (max(0, index - 60)..<index).last(where: { close($0) == index }),
               text(open - 2) == "@" {
                index = open - 1
            } else if isIdentifier(index) && text(index - 1) == "@" {
                isMainActor = isMainActor || text(index) == "MainActor"
                index -= 2
            } else if Self.modifiers.contains(text(index)) {
                isPublic = isPublic || text(index) == "public" || text(index) == "open"
                index -= 1
            } else {
                break
            }
        }
        return (isPublic, isMainActor)
    }

    mutating func typeDeclaration(_ keyword: Int, into facts: inout FileFacts) {
        guard isIdentifier(keyword + 1), !Self.notTypeNames.contains(text(keyword + 1)) else { return }
        let name = text(keyword + 1)
        let generics = genericNames(keyword + 2)
        let colon = generics.isEmpty ? keyword + 2 : (close(keyword + 2) ?? keyword + 1) + 1
        if scopes.count == 1 {
            let (isPublic, isMainActor) = attributes(keyword)
            facts.types.append(TypeDeclaration(
                kind: code[keyword].text, name: name, line: code[keyword].line, column: code[keyword].column,
                isPublic: isPublic, isMainActor: isMainActor, isGeneric: !generics.isEmpty,
                inherits: inheritance(colon), implements: []))
        }
        pending = Scope(names: generics, typeName: name, isProtocol: code[keyword].text == "protocol", depth: depth)
    }

    mutating func extensionDeclaration(_ keyword: Int, into facts: inout FileFacts) {
        var end = keyword + 1
        while end < keyword + 64 && Self.words[text(end)] == nil
            && (isIdentifier(end) && text(end) != "where" || text(end) == ".") { end += 1 }
        let name = typeKey(code[keyword + 1..<end], modules: modules)
        if scopes.count == 1 && text(end) == ":" {
            facts.conformances[name, default: []] += inheritance(end)
        }
        pending = Scope(extended: name, depth: depth)
    }

    mutating func typeAlias(_ keyword: Int, into facts: inout FileFacts) {
        var end = keyword + 3
        while end < min(code.count, keyword + 100) && code[end].line == code[keyword + 2].line
            && !["{", "}", ";"].contains(text(end)) && Self.words[text(end)] == nil {
            end += 1
        }
        let owner = scopes.count > 1 ? scopes.last.flatMap({ $0.typeName ?? $0.extended }) : nil
        let name = owner.map { "\($0).\(text(keyword + 1))" } ?? text(keyword + 1)
        facts.typealiases[name] = typeKey(code[keyword + 3..<end], modules: modules)
    }

    mutating func initializer(_ keyword: Int, into facts: inout FileFacts) {
        guard scopes.count == 2, let scope = scopes.last, !scope.isProtocol,
              let typeName = scope.typeName ?? scope.extended else { return }
        var (open, callable) = (keyword + 1, true)
        if ["?", "!"].contains(text(open)) { (open, callable) = (open + 1, false) }
        if text(open) == "<" { (open, callable) = ((close(open) ?? open) + 1, false) }
        guard text(open) == "(", let end = close(open) else { return }
        var (depth, defaulted) = (0, true)
        for index in open + 1..<end {
            if depth == 0 && text(index) == "," { (callable, defaulted) = (callable && defaulted, false) }
            if depth == 0 && text(index) == "=" { defaulted = true }
            if depth == 0 && text(index) == ":" { defaulted = false }
            depth += bracketChange(code, index)
        }
        let effects = (end + 1..<min(end + 4, code.count)).map(text)
        let (isPublic, isMainActor) = attributes(keyword)
        facts.initializers.append(Initializer(
            typeName: typeName, takesNoArguments: callable && defaulted, isPublic: isPublic, isMainActor: isMainActor,
            isAsync: effects.prefix { $0 != "{" }.contains("async"),
            isThrowing: effects.prefix { $0 != "{" }.contains("throws")))
    }

    /// The type `T` of `(T.self` at `open`: its range, if `.self` ends it before a `,` or `)`.
    func metatype(_ open: Int) -> Range<Int>? {
        guard text(open) == "(" else { return nil }
        var depth = 0
        for index in open + 1..<min(code.count, open + 64) {
            if code[index].kind == .literal || ["{", "}", ";", "="].contains(text(index)) { return nil }
            if depth == 0 && text(index) == "." && text(index + 1) == "self" && [",", ")"].contains(text(index + 2)) {
                return index > open + 1 ? open + 1..<index : nil
            }
            depth += bracketChange(code, index)
            if depth < 0 { return nil }
        }
        return nil
    }

    /// The type `T` of a declaration `name: T = Inject()` or parameter `label name: T = Inject()` whose `=` is at
    /// `equals`.
    func declaredType(_ equals: Int) -> Range<Int>? {
        var (index, depth) = (equals - 1, 0)
        while index > 0 && index > equals - 64 && code[index].kind != .literal {
            if depth == 0 && text(index) == ":" {
                let declares = ["let", "var", "(", ","].contains(text(index - 2))
                    || isIdentifier(index - 2) && ["(", ","].contains(text(index - 3))
                // Two names in a row are no type (`var c: C` then `c = Inject()`), but for `any P` and the like.
                let isType = (index + 1..<equals - 1).allSatisfy {
                    !isIdentifier($0 + 1) || !isIdentifier($0) || text($0 - 1) == "@"
                        || Self.typePrefixes.contains(text($0))
                }
                return isIdentifier(index - 1) && declares && isType && index + 1 < equals ? index + 1..<equals : nil
            }
            if ["{", "}", ";", "=", "let", "var"].contains(text(index)) { return nil }
            depth -= bracketChange(code, index)
            if depth < 0 { return nil }
            index -= 1
        }
        return nil
    }

    /// Whether an unqualified call here is inside an extension of `InjectionManager` or `InjectionContainer`.
    func inManagerExtension() -> Bool { scopes.contains { $0.extended.map(Self.managers.contains) == true } }

    mutating func registration(_ name: Int, into facts: inout FileFacts) {
        let qualified = text(name - 1) == "."
        guard qualified || text(name) != "implements" && text(name - 1) != "func" && inManagerExtension(),
              let type = metatype(name + 1) else { return }
        facts.registrations.append(typeKey(code[type], modules: modules))
    }

    mutating func resolution(_ name: Int, into facts: inout FileFacts) {
        guard text(name - 1) != "func", !ignoredLines.contains(code[name].line) else { return }
        var type: Range<Int>?
        if Self.words[text(name)] == .resolving {
            guard text(name - 1) == "." || inManagerExtension() else { return }
            type = metatype(name + 1)
        } else {
            guard text(name - 1) != "." || text(name - 2) == "Injection" else { return }
            if text(name + 1) == "<", text(name) != "Inject", let end = close(name + 1), text(end + 1) == "(" {
                type = name + 2..<end
            } else if text(name) == "Inject", text(name + 1) == "(", text(name + 2) == ")", text(name - 1) == "=" {
                type = declaredType(name - 1)
            } else {
                type = metatype(name + 1)
            }
        }
        guard let type, !type.isEmpty else { return }
        let names = code[type].filter { $0.kind == .identifier }.map(\.text)
        let generics = Set(scopes.flatMap(\.names) + (pending?.names ?? []) + ["Self"])
        guard !names.contains(where: generics.contains) else { return }
        facts.resolutions.append(Resolution(
            written: writtenType(code[type]), key: typeKey(code[type], modules: modules),
            isExistential: names.contains("any"), line: code[name].line, column: code[name].column, names: names,
            extensions: scopes.compactMap(\.extended)))
    }
}
