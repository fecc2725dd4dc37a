import Foundation
import Injection
import InjectionTesting
import Testing

// Typed keys give several instances of one type, with every lifetime and everywhere a type goes. A type
// and a typed key have separate identities, even when one class is both: a registration under one is
// never read as the other's value; and every resolve returns exactly the registered type.

private protocol Database: AnyObject, Sendable { var path: String { get } }
private final class SQLiteDatabase: Database {
    let path: String
    init(path: String) { self.path = path }
}
private enum PrimaryDatabase: InjectionKey { typealias Value = any Database }
private enum CacheDatabase: InjectionKey { typealias Value = any Database }

/// A class that is an `InjectionKey` for an `Int` and is also registered as a plain type.
private final class Both: InjectionKey, Sendable {
    typealias Value = Int
    let label: String
    init(label: String) { self.label = label }
}

// MARK: - Fuzz

// Fuzz-style: random types (generics, optionals, function types, tuples, existentials, existential
// metatypes, a class that is also an `InjectionKey`) registered under random lifetimes and resolved
// from several threads while they are re-registered. Every resolve returns a value of exactly the
// registered type (same dynamic type, same value) or throws a documented error.

private protocol FuzzProtocol: Sendable {}
private struct FuzzImplementation: FuzzProtocol, CustomStringConvertible { var description: String { "impl" } }
private final class FuzzBox<Content: Sendable>: Sendable, CustomStringConvertible {
    let content: Content
    init(_ content: Content) { self.content = content }
    var description: String { "FuzzBox(\(content))" }
}
private struct FuzzPair<First: Sendable, Second: Sendable>: Sendable { let first: First, second: Second }
private final class FuzzKeyClass: InjectionKey, Sendable, CustomStringConvertible {
    typealias Value = [String]
    var description: String { "FuzzKeyClass" }
}

/// The dynamic type and printed value of `value`, seen through its static type.
private func identity<Value>(_ value: Value) -> String {
    "\(ObjectIdentifier(type(of: value)).hashValue)/\(String(reflecting: type(of: value)))/\(value)"
}

/// One registrable type: registers it with a lifetime, resolves it, and says what a correct resolve returns.
private struct Specimen: Sendable {
    let name: String
    let isClass: Bool
    let register: @Sendable (InjectionContainer, InjectionLifetime) -> Void
    let resolve: @Sendable (InjectionContainer) throws(InjectionError) -> String
    let expected: String

    static func plain<Value>(_ name: String, isClass: Bool = false, _ make: @escaping @Sendable () -> Value) -> Specimen {
        Specimen(
            name: name, isClass: isClass,
            register: { container, lifetime in container.register(Value.self, lifetime: lifetime, factory: make) },
            resolve: { container throws(InjectionError) in identity(try container.resolve(Value.self)) },
            expected: identity(make()))
    }

    static func key<Key: InjectionKey>(_ name: String, _: Key.Type, _ make: @escaping @Sendable () -> Key.Value) -> Specimen
    where Key: SendableMetatype {
        Specimen(
            name: name, isClass: false,
            register: { container, lifetime in container.register(Key.self, lifetime: lifetime, factory: make) },
            resolve: { container throws(InjectionError) in identity(try container.resolve(Key.self)) },
            expected: identity(make()))
    }
}

private let specimens: [Specimen] = [
    .plain("Int") { 7 },
    .plain("Int?") { Optional(8) },
    .plain("String??") { Optional(Optional("nested")) },
    .plain("[Int]") { [1, 2, 3] },
    .plain("(Int, String)") { (4, "tuple") },
    .plain("(Int) -> String") { { (number: Int) in "f\(number)" } as @Sendable (Int) -> String },
    .plain("any FuzzProtocol") { FuzzImplementation() as any FuzzProtocol },
    .plain("(any FuzzProtocol).Type") { FuzzImplementation.self as any FuzzProtocol.Type },
    .plain("FuzzBox<Int>", isClass: true) { FuzzBox(1) },
    .plain("FuzzBox<String>", isClass: true) { FuzzBox("s") },
    .plain("FuzzBox<Int?>", isClass: true) { FuzzBox<Int?>(nil) },
    .plain("FuzzPair<Int, String>") { FuzzPair(first: 1, second: "two") },
    .plain("FuzzKeyClass (the type)", isClass: true) { FuzzKeyClass() },
    .key("FuzzKeyClass (the key)", FuzzKeyClass.self) { ["key", "value"] },
]

@Suite("Typed keys and key identity")
struct KeyIdentityTests {
    // MARK: Typed keys

    @Test("two keys give two instances of one type, with every lifetime", .isolatedInjection)
    func typedKeys() throws {
        InjectionManager.register(PrimaryDatabase.self) { SQLiteDatabase(path: "main.db") }
        InjectionManager.register(CacheDatabase.self, lifetime: .singleton) { SQLiteDatabase(path: "cache.db") }
        let db = Inject(PrimaryDatabase.self)
        let cache: any Database = Inject(CacheDatabase.self)
        #expect(db.path == "main.db")
        #expect(cache.path == "cache.db")
        #expect(try InjectionManager.resolve(PrimaryDatabase.self) === db)
        InjectionManager.resetCurrentContainer()
        #expect(Inject(PrimaryDatabase.self) !== db)          // scoped key: new after reset
        #expect(Inject(CacheDatabase.self) === cache)         // singleton key: kept
        #expect(!InjectionManager.isRegistered((any Database).self))  // the value type itself is not registered
    }

    @Test("keys work with isRegistered, unregister, transient, verify and the graph", .isolatedInjection)
    func keysEverywhere() throws {
        InjectionManager.register(PrimaryDatabase.self, lifetime: .transient) { SQLiteDatabase(path: "main.db") }
        InjectionManager.register(Session.self) { Session(user: Inject(PrimaryDatabase.self).path) }
        #expect(InjectionManager.isRegistered(PrimaryDatabase.self))
        #expect(Inject(PrimaryDatabase.self) !== Inject(PrimaryDatabase.self))
        try InjectionManager.verify()
        #expect(InjectionManager.dependencyGraph().edges == [.init(from: "Session", to: "PrimaryDatabase")])
        InjectionManager.unregister(PrimaryDatabase.self)
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(PrimaryDatabase.self) }
        #expect(error?.description.contains("InjectionManager.register(PrimaryDatabase.self) { ... }") == true)
    }

    @Test("InjectLazy works with keys and reports failures through resolve()", .isolatedInjection)
    func lazyWithKeysAndErrors() throws {
        InjectionManager.register(CacheDatabase.self) { SQLiteDatabase(path: "cache.db") }
        #expect(InjectLazy(CacheDatabase.self).value.path == "cache.db")
        let missing = InjectLazy(PrimaryDatabase.self)
        #expect(throws: InjectionError.self) { try missing.resolve() }
        InjectionManager.register(PrimaryDatabase.self) { SQLiteDatabase(path: "late.db") }
        #expect(try missing.resolve().path == "late.db")  // A failure is not remembered.
    }

    // MARK: A type and a key

    @Test("a class that is both an InjectionKey and a registered type keeps two registrations apart")
    func keyAndTypeAreDistinct() throws {
        let container = InjectionContainer()
        container.register(Both.self) { Both(label: "plain") }   // the type itself
        container.register(Both.self) { 42 }                     // the key, for an Int
        let plain: Both = try container.resolve(Both.self)
        let keyed: Int = try container.resolve(Both.self)
        #expect(plain.label == "plain")
        #expect(keyed == 42)
        #expect(ObjectIdentifier(type(of: plain)) == ObjectIdentifier(Both.self))
        // Cached: the second resolves take the thread-cache path.
        #expect(try (container.resolve(Both.self) as Both) === plain)
        #expect(try (container.resolve(Both.self) as Int) == 42)
    }

    @Test("unregistering the key leaves the plain registration, and the other way round")
    func unregisterOneIdentity() throws {
        let container = InjectionContainer()
        container.register(Both.self) { Both(label: "plain") }
        container.register(Both.self) { 7 }
        #expect(container.isRegistered(Both.self))      // an InjectionKey: asks about the key
        container.unregister(Both.self)                 // removes the key's registration
        #expect(!container.isRegistered(Both.self))
        #expect(try (container.resolve(Both.self) as Both).label == "plain")
        let error = #expect(throws: InjectionError.self) { try container.resolve(Both.self) as Int }
        #expect(error?.kind == .notRegistered)
    }

    @Test("a key registered only as a key is not found as a type, and a type only as a type is not found as a key")
    func oneIdentityOnly() throws {
        let container = InjectionContainer()
        container.register(Both.self) { 1 }
        var error = #expect(throws: InjectionError.self) { try container.resolve(Both.self) as Both }
        #expect(error?.kind == .notRegistered)
        let other = InjectionContainer()
        other.register(Both.self) { Both(label: "plain") }
        error = #expect(throws: InjectionError.self) { try other.resolve(Both.self) as Int }
        #expect(error?.kind == .notRegistered)
    }

    // MARK: Every resolve returns exactly the registered type

    @Test("random types under random lifetimes resolve, from several threads, to exactly the registered type")
    func randomTypesResolveExactly() {
        let seed = SeededRandom.seed(fromEnvironment: "INJECTION_SEED") ?? UInt64.random(in: 0...UInt64.max)
        let lifetimes: [InjectionLifetime] = [.scoped, .singleton, .transient, .weak]
        let container = InjectionContainer()
        for specimen in specimens { specimen.register(container, .scoped) }
        let problems = Collector<String>()
        let finished = runOnThreads(4, timeout: 120) { thread in
            var random = SeededRandom(seed: seed &+ UInt64(thread))
            for _ in 0..<2_000 {
                let specimen = random.pick(specimens)
                if thread == 0 && random.chance(0.2) {
                    specimen.register(container, random.pick(lifetimes))
                    continue
                }
                do throws(InjectionError) {
                    let got = try specimen.resolve(container)
                    if got != specimen.expected { problems.append("\(specimen.name): got \(got), expected \(specimen.expected)") }
                } catch {
                    // The one documented failure here: a `.weak` registration of a value that is not a class.
                    if !(error.kind == .weakNeedsClass && !specimen.isClass) {
                        problems.append("\(specimen.name): \(error.kind): \(error)")
                    }
                }
            }
        }
        #expect(finished)
        #expect(problems.values.isEmpty, "seed \(seed) (replay with INJECTION_SEED=\(seed)): \(problems.values.prefix(5))")
    }
}
