import Foundation
import Injection
import InjectionTesting
import Testing

// Typed keys give several instances of one type, with every lifetime and everywhere a type goes. A type
// and a typed key have separate identities, even when one class is both: a registration under one is
// never read as the other's value.

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
}
