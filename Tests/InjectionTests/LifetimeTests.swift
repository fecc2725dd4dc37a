import Injection
import InjectionTesting
import Testing

// Lifetimes: a scoped instance lives until the next reset, a singleton survives resets, a transient is new on
// every resolve, and a `.weak` one is shared while someone holds it; registering again replaces a registration.

private final class ReadBackClass: Sendable {}
private enum ReadBackKey: InjectionKey { typealias Value = ReadBackClass }
private final class ReadBackMainActor: Sendable {}
private final class ReadBackAsync: Sendable {}

@Suite("Lifetimes and registration", .isolatedInjection)
struct LifetimeTests {
    @Test("container.reset() and reset { } end the scope")
    func containerResetNames() throws {
        let container = InjectionContainer()
        container.register((any API).self) { LiveAPI() }
        container.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        let (api, clock) = (try container.resolve((any API).self), try container.resolve((any Clock).self))
        container.reset()
        #expect(try container.resolve((any API).self) !== api)
        #expect(try container.resolve((any Clock).self) === clock)
        let second = try container.resolve((any API).self)
        container.reset { container.register((any API).self) { LiveAPI(name: "mock") } }
        #expect(try container.resolve((any API).self).name == "mock")
        #expect(try container.resolve((any API).self) !== second)
    }

    @Test("both Inject spellings return the same scoped instance")
    func bothSpellingsShareScopedInstance() {
        InjectionManager.register((any API).self) { LiveAPI() }
        let screen = Screen()
        #expect(screen.api === screen.sameAPI)
        #expect(screen.api === Inject((any API).self))
    }

    @Test("a reset gives a new scoped instance while a singleton survives")
    func resetEvictsScopedKeepsSingleton() throws {
        InjectionManager.register((any API).self) { LiveAPI() }
        InjectionManager.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        let api1: any API = Inject()
        let clock1: any Clock = Inject()
        InjectionManager.resetCurrentContainer()
        let api2: any API = Inject()
        let clock2: any Clock = Inject()
        #expect(api1 !== api2)
        #expect(clock1 === clock2)
        #expect(api2 === Inject((any API).self))
    }

    @Test("a transient registration builds a new instance on every resolve")
    func transientIsNewEachTime() {
        let runs = Counter()
        InjectionManager.register(Formatter.self, lifetime: .transient) { runs.increment(); return Formatter() }
        let first: Formatter = Inject()
        let second: Formatter = Inject()
        #expect(first !== second)
        #expect(runs.value == 2)
    }

    @Test("a scoped factory runs once per scope")
    func scopedFactoryRunsOncePerScope() {
        let runs = Counter()
        InjectionManager.register((any API).self) { runs.increment(); return LiveAPI() }
        for _ in 0..<5 { _ = Inject((any API).self) }
        #expect(runs.value == 1)
        InjectionManager.resetCurrentContainer()
        for _ in 0..<5 { _ = Inject((any API).self) }
        #expect(runs.value == 2)
    }

    @Test("registering again replaces the factory and evicts the cached instance")
    func reRegistrationWins() {
        InjectionManager.register((any API).self) { LiveAPI(name: "first") }
        let first: any API = Inject()
        InjectionManager.register((any API).self) { LiveAPI(name: "second") }
        let second: any API = Inject()
        #expect(first.name == "first")
        #expect(second.name == "second")
        #expect(Inject((any API).self) === second)
    }

    @Test("re-registering a singleton replaces it too")
    func reRegistrationReplacesSingleton() {
        InjectionManager.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        let first: any Clock = Inject()
        InjectionManager.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        #expect(Inject((any Clock).self) !== first)
    }

    @Test("function types register and resolve like any other type")
    func functionTypes() {
        InjectionManager.register(((String) -> Detail).self) { { Detail(id: $0) } }
        let makeDetail: (String) -> Detail = Inject()
        #expect(makeDetail("42").id == "42")
        #expect(makeDetail("a") !== makeDetail("a"))
    }

    @Test("value types are cached per scope")
    func valueTypes() {
        let runs = Counter()
        InjectionManager.register(Int.self) { runs.increment() }
        #expect(Inject(Int.self) == 1)
        #expect(Inject(Int.self) == 1)
        InjectionManager.resetCurrentContainer()
        #expect(Inject(Int.self) == 2)
    }

    @Test("factories inject their own dependencies, whatever the registration order")
    func factoriesInjectDependencies() {
        InjectionManager.register(ViewModel.self) { ViewModel(api: Inject(), clock: Inject()) }
        InjectionManager.register((any API).self) { LiveAPI() }
        InjectionManager.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        let viewModel: ViewModel = Inject()
        #expect(viewModel.api === Inject((any API).self))
        #expect(viewModel.clock === Inject((any Clock).self))
    }

    @Test("a constructor default argument injects while an explicit argument wins")
    func constructorDefaults() {
        InjectionManager.register((any API).self) { LiveAPI(name: "injected") }
        InjectionManager.register((any Clock).self) { SystemClock() }
        #expect(ViewModel().api.name == "injected")
        #expect(ViewModel(api: LiveAPI(name: "explicit")).api.name == "explicit")
    }

    @Test("isRegistered and unregister")
    func isRegisteredAndUnregister() throws {
        #expect(!InjectionManager.isRegistered((any API).self))
        InjectionManager.register((any API).self) { LiveAPI() }
        #expect(InjectionManager.isRegistered((any API).self))
        _ = try InjectionManager.resolve((any API).self)
        InjectionManager.unregister((any API).self)
        #expect(!InjectionManager.isRegistered((any API).self))
        #expect(throws: InjectionError.self) { try InjectionManager.resolve((any API).self) }
    }

    @Test("unregister releases the cached instance")
    func unregisterReleasesInstance() {
        InjectionManager.register((any API).self) { LiveAPI() }
        weak var weakAPI: LiveAPI?
        do {
            let api = Inject((any API).self)
            weakAPI = api as? LiveAPI
            #expect(weakAPI != nil)
        }
        InjectionManager.unregister((any API).self)
        #expect(weakAPI == nil)
    }

    @Test("reset releases evicted scoped instances")
    func resetReleasesInstances() {
        InjectionManager.register((any API).self) { LiveAPI() }
        weak var weakAPI: LiveAPI?
        do { weakAPI = Inject((any API).self) as? LiveAPI }
        #expect(weakAPI != nil)
        InjectionManager.resetCurrentContainer()
        #expect(weakAPI == nil)
    }

    // MARK: Weak

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

    @Test(".weak of an optional of an optional class treats a nil inside (`.some(nil)`) as nil: no error, nothing kept")
    func weakNestedOptionalNil() throws {
        let runs = Counter()
        InjectionManager.register(Formatter??.self, lifetime: .weak) { runs.increment(); return .some(nil) }
        let first = try InjectionManager.resolve(Formatter??.self)
        #expect(first.flatMap { $0 } == nil)
        _ = try InjectionManager.resolve(Formatter??.self)
        #expect(runs.value == 2, "nil is never kept: the factory runs again")
    }

    @Test("a reset forgets weak instances even while they are held")
    func resetForgetsWeak() {
        InjectionManager.register(Expensive.self, lifetime: .weak) { Expensive(runs: Counter()) }
        let held: Expensive = Inject()
        InjectionManager.resetCurrentContainer()
        #expect(Inject(Expensive.self) !== held)
    }

    /// Every lifetime, registered every way (a type, a key with `postConstruction`, a main-actor factory, an
    /// async factory), reads back as registered (the graph, and the behaviour: cached or not, kept across a
    /// reset or not), in a container and in its copy.
    @Test("every lifetime reads back as registered, for every way of registering, in a container and its copy", arguments: [
        InjectionLifetime.scoped, .singleton, .transient, .weak,
    ])
    func lifetimeReadsBack(lifetime: InjectionLifetime) async throws {
        let container = InjectionContainer()
        container.register(ReadBackClass.self, lifetime: lifetime) { ReadBackClass() }
        container.register(ReadBackKey.self, lifetime: lifetime) { ReadBackClass() }.postConstruction { _ in }
        container.register(ReadBackMainActor.self, lifetime: lifetime, isolation: MainActor.shared) { ReadBackMainActor() }
        container.registerAsync(ReadBackAsync.self, lifetime: lifetime) { () async in ReadBackAsync() }
        let copy = InjectionContainer(copying: container)
        for box in [container, copy] {
            let lifetimes = Dictionary(uniqueKeysWithValues: box.dependencyGraph().nodes.map { ($0.name, $0.lifetime) })
            for name in ["ReadBackClass", "ReadBackKey", "ReadBackMainActor", "ReadBackAsync"] where lifetimes[name] != nil {
                #expect(lifetimes[name] == lifetime, "\(name): \(String(describing: lifetimes[name]))")
            }
            #expect(lifetimes.count == 4, "\(lifetimes)")
            var kept: [AnyObject] = []
            let first = try box.resolve(ReadBackClass.self), second = try box.resolve(ReadBackClass.self)
            let firstKey = try box.resolve(ReadBackKey.self), secondKey = try box.resolve(ReadBackKey.self)
            let firstAsync = try await box.resolveAsync(ReadBackAsync.self), secondAsync = try await box.resolveAsync(ReadBackAsync.self)
            kept += [first, second, firstKey, secondKey, firstAsync, secondAsync]
            #expect((first === second) == (lifetime != .transient))
            #expect((firstKey === secondKey) == (lifetime != .transient))
            #expect((firstAsync === secondAsync) == (lifetime != .transient))
            box.reset()
            let afterReset = try box.resolve(ReadBackClass.self)
            #expect((afterReset === first) == (lifetime == .singleton))
            withExtendedLifetime(kept) {}
        }
    }
}
