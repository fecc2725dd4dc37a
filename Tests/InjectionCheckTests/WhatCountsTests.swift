import InjectionCheckCore
import Testing

/// Each registration and resolution shape of issue 41 is read as one, and nothing else is.
@Suite("What counts as a registration and a resolution")
struct WhatCountsTests {
    static let registrations: [(source: String, registers: [String])] = [
        ("InjectionManager.register(A.self) { A() }", ["A"]),
        ("container.register((any B).self, lifetime: .singleton) { C() }", ["B"]),
        ("InjectionManager.registerAsync(D.self) { await D() }", ["D"]),
        ("InjectionManager.unsafeRegister(E.self) { E() }", ["E"]),
        ("makeContainer().register(F.self, instance: F())", ["F"]),
        ("InjectionManager.register(G.self, isolation: MainActor.shared) { G() }", ["G"]),
        ("InjectionManager.register(H.self) { H() }.implements((any I).self) { $0 }", ["H", "I"]),
        ("InjectionManager\n    .register(Box<Int>.self) { Box() }", ["Box<Int>"]),
        ("extension InjectionManager { static func setUp() { register(J.self) { J() } } }", ["J"]),
        ("extension InjectionContainer { func setUp() { if true { register(K.self) { K() } } } }", ["K"]),
        ("func setUp() { register(L.self) { L() } }", []),
        ("struct S { func register(_ type: M.Type) {} }", []),
        ("// injection-check: registers N, Services.O, Box<Int, String>", ["N", "O", "Box<Int,String>"]),
        ("InjectionManager.register(Services.P.self) { P() }", ["P"]),
        ("#if DEBUG\nInjectionManager.register(Q.self) { Q() }\n"
            + "#else\nInjectionManager.register(R.self) { R() }\n#endif", ["Q", "R"]),
        ("let s = \"InjectionManager.register(S.self) { S() }\"", []),
        ("// InjectionManager.register(T.self)\n/* InjectionManager.register(U.self) */", []),
        ("let s = #\"\"\"\nInjectionManager.register(V.self)\n\"\"\"#", []),
        ("InjectionManager.register(type) { make() }", []),
    ]

    @Test("registrations are read in every shape, and only there", arguments: registrations.indices)
    func registration(_ index: Int) {
        let (source, registers) = Self.registrations[index]
        #expect(facts(source).registrations == registers, "\(source)")
    }

    static let resolutions: [(source: String, resolves: [String])] = [
        ("let a: any A = Inject()", ["A@1:16"]),
        ("let b = Inject(B.self)", ["B@1:9"]),
        ("let c = InjectLazy(C.self), d = InjectProvider((any D).self)", ["C@1:9", "D@1:33"]),
        ("let e = InjectLazy<any E>()\nlet f = InjectProvider<F>()", ["E@1:9", "F@2:9"]),
        ("init(g: any G = Inject(), _ h: H = Inject(), label i: [I] = Inject()) {}", ["G@1:17", "H@1:36", "[I]@1:61"]),
        ("private lazy var j: J =\n    Inject()", ["J@2:5"]),
        ("func f() async throws {\n  _ = try InjectionManager.resolve(K.self)\n"
            + "  _ = try await container.resolveAsync((any L).self)\n  try await InjectionManager.prepare(M.self)\n}",
         ["K@2:28", "L@3:27", "M@4:30"]),
        ("let n = Injection.Inject(N.self)", ["N@1:19"]),
        ("let o: (any Services.O)? = Inject()", ["(Services.O)?@1:28"]),
        ("let p: any P & Q = Inject()", ["P & Q@1:20"]),
        ("let s = \"\\(Inject(S.self))\"", ["S@1:12"]),
        ("use(Inject())\nfunc make() -> T { Inject() }\nlet u = cond ? v : Inject()", []),
        ("let a: Int\nlet b = Inject() as B\nvar c: C\nc = Inject()\nswitch e { case .d: x = Inject() }", []),
        ("struct Box<T> { let t: T = Inject()\n func f<U>(u: U = Inject(), w: [U] = Inject()) {} }", []),
        ("func f<T>(t: T = Inject()) -> T where T: Sendable { let x: T = Inject(); return x }", []),
        ("extension Array { func f() { let s: Self = Inject() } }", []),
        ("func f<T: Maker>(x: T = T.init(), y: () -> Void = {}) { let t: T = Inject(); super.init() }", []),
        ("let w: W = Inject() // injection-check: ignore\n// injection-check: ignore\nlet x: X = Inject()", []),
        ("x.Inject(Y.self)\nfunc Inject(_ t: Z.Type) {}\nhelper.resolve(type)", []),
        ("let s = \"Inject(A.self)\" // Inject(B.self)\n/* let c: C = Inject() */ let r = /Inject\\(D.self\\)/", []),
    ]

    @Test("resolutions are read in every shape, at the name of the call", arguments: resolutions.indices)
    func resolution(_ index: Int) {
        let (source, resolves) = Self.resolutions[index]
        #expect(facts(source).resolutions.map { "\($0.written)@\($0.line):\($0.column)" } == resolves, "\(source)")
    }

    @Test("names match through typealiases and scanned modules' prefixes, never by a module that is not scanned")
    func namesMatch() {
        #expect(diagnostics("""
            typealias Store = any DataStore
            typealias Shop = Store
            InjectionManager.register((any DataStore).self) { LiveStore() }
            InjectionManager.register(Services.Keychain.self) { Keychain() }
            let a: Shop = Inject()
            let b: any Services.DataStore = Inject()
            let c = Inject((Keychain).self)
            """).isEmpty)
        #expect(diagnostics("""
            InjectionManager.register(Keychain.self) { Keychain() }
            let c = Inject(Vendor.Keychain.self)
            """).count == 1)
    }

    @Test("an associated type of an extended protocol is never a missing registration")
    func associatedTypes() {
        #expect(diagnostics("""
            protocol Repository { associatedtype Entity; func load(_ entity: Entity) }
            extension Repository { func load(entity: Entity = Inject()) {} }
            protocol Plain { associatedtype Item }
            """).isEmpty)
        #expect(diagnostics("extension Other { func load(entity: Entity = Inject()) {} }").count == 1)
    }

    @Test("a typed key is registered as the key, not as its value")
    func keys() {
        #expect(diagnostics("""
            enum Primary: InjectionKey { typealias Value = any Database }
            InjectionManager.register(Primary.self) { SQLite() }
            let db = Inject(Primary.self)
            """).isEmpty)
        #expect(diagnostics("""
            enum Primary: InjectionKey { typealias Value = any Database }
            InjectionManager.register(Primary.self) { SQLite() }
            let db: any Database = Inject()
            """).count == 1)
    }
}
