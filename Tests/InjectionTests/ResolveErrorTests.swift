import Injection
import InjectionTesting
import Testing

private struct DiskFull: Error, CustomStringConvertible {
    var description: String { "disk full" }
}

private final class Store: Sendable {
    let api: any API
    init(api: any API) { self.api = api }
}

@Suite("Errors from resolve", .isolatedInjection)
struct ResolveErrorTests {
    @Test("resolving a missing type throws notRegistered with the fix in the message")
    func missingTypeThrows() {
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any API).self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.typeName == "API")
        #expect(error?.chain == ["API"])
        #expect(error?.description.hasPrefix("Injection: no registration for API.") == true)
        #expect(error?.description.contains("InjectionManager.register((any API).self) { ... }") == true)
    }

    @Test("a missing dependency deeper in the graph throws with the whole chain")
    func missingDependencyThrowsWithChain() {
        InjectionManager.register(ViewModel.self) { try ViewModel(api: InjectionManager.resolve(), clock: InjectionManager.resolve()) }
        InjectionManager.register((any Clock).self) { SystemClock() }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(ViewModel.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.typeName == "API")
        #expect(error?.chain == ["ViewModel", "API"])
        #expect(error?.description.contains("(resolving ViewModel → API)") == true)
    }

    @Test("asking for an optional by mistake suggests the non-optional type")
    func optionalHint() {
        InjectionManager.register(Detail.self) { Detail(id: "1") }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Detail?.self) }
        #expect(error?.typeName == "Optional<Detail>")
        #expect(error?.description.hasSuffix("If you meant the non-optional type, write Inject(Detail.self): Inject() into an optional asks for Optional<Detail> itself.") == true)
    }

    @Test("the fix for a protocol type spells it (any P), which compiles with ExistentialAny; a concrete type stays T")
    func existentialFixSpelling() {
        InjectionManager.register((any API).self) { LiveAPI() }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any API)?.self) }
        #expect(error?.description.contains("write Inject((any API).self)") == true)
        let concrete = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Detail.self) }
        #expect(concrete?.description.contains("InjectionManager.register(Detail.self) { ... }") == true)
    }

    @Test("a function type's fix names it with parentheses")
    func functionTypeFix() {
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(((String) -> Detail).self) }
        #expect(error?.description.contains("InjectionManager.register(((String) -> Detail).self) { ... }") == true)
    }

    @Test("a throwing factory is reported with its error, nothing is cached, and the next resolve retries")
    func throwingFactory() throws {
        let runs = Counter()
        InjectionManager.register((any API).self) {
            if runs.increment() == 1 { throw DiskFull() }
            return LiveAPI()
        }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any API).self) }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.underlyingError is DiskFull)
        #expect(error?.description.hasPrefix("Injection: the factory for API threw disk full") == true)
        let api = try InjectionManager.resolve((any API).self)
        #expect(runs.value == 2)
        #expect(try InjectionManager.resolve((any API).self) === api)
    }

    @Test("a throwing factory two levels down reports the full chain")
    func throwingFactoryDeepInGraph() {
        InjectionManager.register(ViewModel.self) { try ViewModel(api: InjectionManager.resolve(), clock: InjectionManager.resolve()) }
        InjectionManager.register((any API).self) { try LiveAPI(name: InjectionManager.resolve(Store.self).api.name) }
        InjectionManager.register(Store.self) { throw DiskFull() }
        InjectionManager.register((any Clock).self) { SystemClock() }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(ViewModel.self) }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.chain == ["ViewModel", "API", "Store"])
        #expect(error?.underlyingError is DiskFull)
    }

    @Test("a dependency cycle on one thread throws with its path")
    func cycleOnOneThread() {
        InjectionManager.register(Store.self) { try Store(api: InjectionManager.resolve()) }
        InjectionManager.register((any API).self) { try LiveAPI(name: InjectionManager.resolve(Store.self).api.name) }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Store.self) }
        #expect(error?.kind == .cycle)
        #expect(error?.chain == ["Store", "API", "Store"])
        #expect(error?.description.hasPrefix("Injection: dependency cycle: Store → API → Store.") == true)
    }

    @Test("a transient that needs itself is a cycle, not a stack overflow")
    func transientSelfCycle() {
        InjectionManager.register(Formatter.self, lifetime: .transient) { _ = try InjectionManager.resolve(Formatter.self); return Formatter() }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Formatter.self) }
        #expect(error?.chain == ["Formatter", "Formatter"])
    }
}
