import Foundation
import Injection
import InjectionTesting
import Testing

// MARK: - Fixtures

private protocol Database: AnyObject, Sendable { var path: String { get } }
private final class SQLiteDatabase: Database {
    let path: String
    init(path: String) { self.path = path }
}
private enum PrimaryDatabase: InjectionKey { typealias Value = any Database }
private enum CacheDatabase: InjectionKey { typealias Value = any Database }

private final class DataProvider: @unchecked Sendable {
    weak var delegate: ViewController?
    init() {}
}
private final class ViewController: Sendable {
    let provider: DataProvider
    init(provider: DataProvider = Inject()) { self.provider = provider }
}

private final class Socket: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() {
        disposals.increment()
        // dispose() runs outside the lock, so it may use the container.
        _ = InjectionManager.isRegistered(Socket.self)
    }
}

private final class Expensive: Sendable {
    init(runs: Counter) { runs.increment() }
}

@Suite("Typed keys, deliberate cycles, weak lifetime, teardown", .isolatedInjection)
struct BeyondBasicsTests {
    // MARK: Typed keys

    @Test("two keys give two instances of one type, with every lifetime")
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

    @Test("keys work with isRegistered, unregister, transient, verify and the graph")
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

    // MARK: Deliberate cycles

    @Test("postConstruction closes a cycle: the pair resolves in either order, each built once", arguments: [true, false])
    func postConstructionCycle(providerFirst: Bool) throws {
        let providers = Counter(), controllers = Counter()
        InjectionManager.register(DataProvider.self) {
            providers.increment()
            return DataProvider()
        } postConstruction: { provider in
            provider.delegate = Inject(ViewController.self)
        }
        InjectionManager.register(ViewController.self) { controllers.increment(); return ViewController() }
        let provider: DataProvider, controller: ViewController
        if providerFirst {
            provider = Inject(); controller = Inject()
        } else {
            controller = Inject(); provider = Inject()
        }
        #expect(provider.delegate === controller)
        #expect(controller.provider === provider)
        #expect(providers.value == 1)
        #expect(controllers.value == 1)
    }

    @Test("a throwing postConstruction is reported and its instance is not kept")
    func throwingPostConstruction() {
        struct Refused: Error {}
        let runs = Counter()
        InjectionManager.register(DataProvider.self) { runs.increment(); return DataProvider() } postConstruction: { _ in throw Refused() }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(DataProvider.self) }
        #expect(error?.underlyingError is Refused)
        _ = try? InjectionManager.resolve(DataProvider.self)
        #expect(runs.value == 2)
    }

    @Test("an accidental cycle is still an error")
    func accidentalCycleStillFails() {
        InjectionManager.register(DataProvider.self) { _ = try InjectionManager.resolve(ViewController.self); return DataProvider() }
        InjectionManager.register(ViewController.self) { try ViewController(provider: InjectionManager.resolve()) }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(ViewController.self) }
        #expect(error?.kind == .cycle)
    }

    @Test("InjectLazy resolves on first use, once, from the container current at creation")
    func lazyHandle() throws {
        let runs = Counter()
        InjectionManager.register(Expensive.self, lifetime: .transient) { Expensive(runs: runs) }
        let lazy = InjectLazy(Expensive.self)
        #expect(runs.value == 0)
        let first = lazy.value
        #expect(lazy.value === first)
        #expect(runs.value == 1)
        // Read from a thread outside any binding: still resolves from the creating container.
        InjectionManager.register(Detail.self) { Detail(id: "bound") }
        let detail = InjectLazy(Detail.self)
        let done = Gate(), ids = Collector<String>()
        onThread { ids.append(detail.value.id); done.open() }
        #expect(done.wait())
        #expect(ids.values == ["bound"])
    }

    @Test("InjectLazy works with keys and reports failures through resolve()")
    func lazyWithKeysAndErrors() throws {
        InjectionManager.register(CacheDatabase.self) { SQLiteDatabase(path: "cache.db") }
        #expect(InjectLazy(CacheDatabase.self).value.path == "cache.db")
        let missing = InjectLazy(PrimaryDatabase.self)
        #expect(throws: InjectionError.self) { try missing.resolve() }
        InjectionManager.register(PrimaryDatabase.self) { SQLiteDatabase(path: "late.db") }
        #expect(try missing.resolve().path == "late.db")  // A failure is not remembered.
    }

    // MARK: Weak lifetime

    @Test(".weak shares the instance while someone holds it and rebuilds after")
    func weakLifetime() {
        let runs = Counter()
        InjectionManager.register(Expensive.self, lifetime: .weak) { Expensive(runs: runs) }
        var held: Expensive? = Inject(Expensive.self)
        #expect(Inject(Expensive.self) === held)
        #expect(runs.value == 1)
        weak let weakHeld = held
        held = nil
        #expect(weakHeld == nil)
        _ = Inject(Expensive.self)
        #expect(runs.value == 2)
    }

    @Test(".weak with a value type fails with a clear error")
    func weakValueType() {
        InjectionManager.register(Int.self, lifetime: .weak) { 42 }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Int.self) }
        #expect(error?.kind == .weakNeedsClass)
        #expect(error?.description.hasPrefix("Injection: Int is registered with lifetime .weak") == true)
    }

    @Test("a reset forgets weak instances even while they are held")
    func resetForgetsWeak() {
        InjectionManager.register(Expensive.self, lifetime: .weak) { Expensive(runs: Counter()) }
        let held: Expensive = Inject()
        InjectionManager.resetCurrentContainer()
        #expect(Inject(Expensive.self) !== held)
    }

    // MARK: Teardown

    @Test("evicted instances are told once, outside the lock, by reset, unregister and re-registration")
    func disposal() {
        let disposals = Counter()
        InjectionManager.register(Socket.self) { Socket(disposals: disposals) }
        _ = Inject(Socket.self)
        InjectionManager.resetCurrentContainer()
        #expect(disposals.value == 1)
        InjectionManager.resetCurrentContainer()       // Nothing cached: nothing to tell.
        #expect(disposals.value == 1)
        _ = Inject(Socket.self)
        InjectionManager.register(Socket.self) { Socket(disposals: disposals) }
        #expect(disposals.value == 2)
        _ = Inject(Socket.self)
        InjectionManager.unregister(Socket.self)
        #expect(disposals.value == 3)
        InjectionManager.resetCurrentContainer()       // Both replaced instances were told already.
        #expect(disposals.value == 3)
    }

    @Test("singletons are not disposed by a reset")
    func singletonsSurviveWithoutDisposal() {
        let disposals = Counter()
        InjectionManager.register(Socket.self, lifetime: .singleton) { Socket(disposals: disposals) }
        _ = Inject(Socket.self)
        InjectionManager.resetCurrentContainer()
        #expect(disposals.value == 0)
    }

    @Test("liveInstancesFromPreviousScopes lists evicted instances that are still held")
    func staleInstances() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        InjectionManager.register((any API).self) { LiveAPI() }
        var leaked: Session? = Inject(Session.self)
        _ = Inject((any API).self)
        InjectionManager.resetCurrentContainer()
        #expect(InjectionManager.liveInstancesFromPreviousScopes() == ["Session"])
        leaked = nil
        #expect(leaked == nil)
        #expect(InjectionManager.liveInstancesFromPreviousScopes().isEmpty)
    }

    @Test("tracking can be turned off")
    func trackingCanBeTurnedOff() {
        let container = InjectionManager.currentContainer
        container.tracksEvictedInstances = false
        InjectionManager.register(Session.self) { Session(user: "a") }
        let held: Session = Inject()
        InjectionManager.resetCurrentContainer()
        #expect(InjectionManager.liveInstancesFromPreviousScopes().isEmpty)
        withExtendedLifetime(held) {}
    }
}
