import InjectionCheckCore
import Testing

/// The tokenizer sees code only where the compiler does: every comment and literal form, interpolations, regexes.
@Suite("The tokenizer")
struct TokenizerEdgeCaseTests {
    static let cases: [(source: String, code: String)] = [
        ("a // b c", "a"),
        ("a /// doc Inject(X.self)\nb", "a b"),
        ("a /* b /* c */ d */ e", "a e"),
        ("a /* b /* c */ d e", "a"),
        ("a /**/ b /*/ c */ d", "a b d"),
        ("\"x\" y", "<lit> y"),
        ("\"a \\\"b\\\" c\" d", "<lit> d"),
        ("x = \"a\\\\\" + y", "x = <lit> + y"),
        ("\"\" a", "<lit> a"),
        ("\"a \\(b + \"c \\(d)\") e\" f", "<lit> b + <lit> d f"),
        ("\"\\(f(g(1)))\" h", "<lit> f ( g ( <lit> ) ) h"),
        ("\"\"\"\n a \"b\" \"\" \\(c) \"\n\"\"\" d", "<lit> c d"),
        ("\"\"\"\n a \\\n b\n \"\"\" c", "<lit> c"),
        ("#\"a \\(b) \\#(c) \"# d", "<lit> c d"),
        ("##\"a \"# \\#(b) \\##(c)\"## d", "<lit> c d"),
        ("#\"\"\"\n \"\"\" \\(a) \\#(b)\n\"\"\"# c", "<lit> b c"),
        ("\"unterminated Inject(A.self)\nnext", "<lit> next"),
        ("\"a \\(b\nc", "<lit> b c"),
        ("\"\"\"\nunterminated\nInject(A.self)", "<lit>"),
        ("#\"unterminated \"\" \nnext", "<lit> next"),
        ("let r = /a\\/b(c)/ ; x", "let r = <lit> ; x"),
        ("let r = /[/]Inject(A.self)/\nx", "let r = <lit> x"),
        ("let r = #/a/b/# x", "let r = <lit> x"),
        ("let r = #/\n a / Inject(A.self)\n/# x", "let r = <lit> x"),
        ("a / b / c", "a / b / c"),
        ("f(x) / 2 / y", "f ( x ) / <lit> / y"),
        ("a /= 2", "a / = <lit>"),
        ("`class` x", "class x"),
        ("#if DEBUG\na\n#elseif os(Linux)\nb\n#else\nc\n#endif",
         "# if DEBUG a # elseif os ( Linux ) b # else c # endif"),
        ("a<b<c>> d", "a < b < c > > d"),
        ("(x) -> y", "( x ) - > y"),
        ("@MainActor final class X", "@ MainActor final class X"),
        ("\"\\u{1F600}\" z", "<lit> z"),
        ("café = 1.5e3", "café = <lit>"),
        ("x.0.1", "x . <lit>"),
    ]

    @Test("code is read, and comments and literals are not", arguments: cases.indices)
    func readsCodeOnly(_ index: Int) {
        #expect(codeText(Self.cases[index].source) == Self.cases[index].code, "\(Self.cases[index].source)")
    }

    @Test("lines and columns are those the compiler prints, after multi-line literals and comments")
    func positions() {
        let tokens = tokenize(Array("\"\"\"\nline\n\"\"\"\n/* a\n b */ x\n\"é\" y\n\tz".utf8)).code
        let places = tokens.map { "\($0.text)@\($0.line):\($0.column)" }
        #expect(places == ["@1:1", "x@5:7", "@6:1", "y@6:6", "z@7:2"])
    }

    @Test("a comment alone on its line is told from one that ends a line of code")
    func commentsKnowWhetherTheyAreAlone() {
        let comments = tokenize(Array("a // end\n  // alone\n\"\"\"\n\"\"\" // after a string".utf8)).comments
        #expect(comments.map(\.text) == [" end", " alone", " after a string"])
        #expect(comments.map(\.startsLine) == [false, true, false])
    }

    @Test("any bytes end: random bytes, deep interpolations, open brackets")
    func anyInputEnds() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let random = (0..<1_000_000).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        #expect(tokenize(random).code.count > 0)
        let deep = Array(String(repeating: "\"\\(", count: 20_000).utf8)
        #expect(tokenize(deep).code.count > 0)
        let open = String(repeating: "f(<[{", count: 20_000) + "Inject("
        #expect(facts(open).resolutions.isEmpty)
    }

    @Test("shapes that make a naive reader scan to the end of the file for each occurrence end, on one long line",
          arguments: ["class A: B, ", "(/[", "typealias A = B ", "extension ", "init(x: A, ", "@available(*) ",
                      "// injection-check: implements P\n", "let a: A = Inject() // injection-check: ignore\n"])
    func repeatedShapesEnd(_ shape: String) {
        let source = String(repeating: shape, count: 40_000)
        let tokens = tokenize(Array(source.utf8))
        #expect(tokens.code.count + tokens.comments.count >= 40_000)
        #expect(facts(source).resolutions.isEmpty)
    }
}
