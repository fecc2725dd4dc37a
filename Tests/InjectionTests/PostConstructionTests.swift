import Foundation
@_spi(Testing) import Injection
import InjectionTesting
import Testing

// `postConstruction` runs once for every instance built, on every path (the thread cache's transients and
// child tasks included), after the whole graph of the resolve is cached, so it can close a deliberate cycle.
// When it throws, the resolve fails with what threw, and everything that resolve built is evicted.

private final class DataProvider: @unchecked Sendable {
    weak var delegate: ViewController?
    init() {}
}
private final class ViewController: Sendable {
    let provider: DataProvider
    init(provider: DataProvider = Inject()) { self.provider = provider }
}

private final class Top: Sendable {
    let middle: Middle
    init(middle: Middle) { self.middle = middle }
}
private final class Middle: Sendable {
    let part: Part
    init(part: Part) { self.part = part }
}
private final class AsyncRoot: Sendable {}
private final class WeakProbe: Sendable {}
private final class Serial: Sendable {
    let number: Int
    init(_ number: Int) { self.number = number }
}
private struct SerialValue: Sendable { let number: Int }
private struct Refused: Error {}

@Suite("postConstruction", .isolatedInjection)
struct PostConstructionTests {
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

    @Test("an accidental cycle is still an error")
    func accidentalCycleStillFails() {
        InjectionManager.register(DataProvider.self) { _ = try InjectionManager.resolve(ViewController.self); return DataProvider() }
        InjectionManager.register(ViewController.self) { try ViewController(provider: InjectionManager.resolve()) }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(ViewController.self) }
        #expect(error?.kind == .cycle)
    }

    // MARK: When it throws

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

    @Test("a failing postConstruction in the graph evicts the root too, and the message says what threw")
    func failingDeferredWorkEvictsTheRoot() throws {
        let fails = Counter()
        InjectionManager.register(Holder.self) { Holder(part: Inject()) }
        InjectionManager.register(Part.self) { Part(deinits: Counter()) } postConstruction: { _ in
            if fails.increment() == 1 { throw Refused() }
        }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Holder.self) }
        #expect(error?.description.hasPrefix("Injection: the postConstruction of Part threw Refused()") == true)
        let holder = try InjectionManager.resolve(Holder.self)
        #expect(holder.part === (try InjectionManager.resolve(Part.self)))  // One Part per scope, and the root holds it.
    }

    @Test("a failing postConstruction evicts everything its resolve built, not only the root")
    func failingDeferredWorkEvictsTheWholeGraph() throws {
        let fails = Counter()
        InjectionManager.register(Top.self) { Top(middle: Inject()) }
        InjectionManager.register(Middle.self) { Middle(part: Inject()) }
        InjectionManager.register(Part.self) { Part(deinits: Counter()) } postConstruction: { _ in
            if fails.increment() == 1 { throw Refused() }
        }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Top.self) }
        #expect(error?.description.contains("The instance was evicted, with everything the same resolve built") == true)
        let top = try InjectionManager.resolve(Top.self)
        #expect(top.middle === (try InjectionManager.resolve(Middle.self)))
        #expect(top.middle.part === (try InjectionManager.resolve(Part.self)))
    }

    @Test("a .weak instance whose postConstruction threw is never handed out again, even while something holds it")
    func failedWeakInstanceIsForgotten() throws {
        let container = InjectionContainer()
        let kept = Collector<WeakProbe>(), runs = Counter()
        container.register(WeakProbe.self, lifetime: .weak) { WeakProbe() } postConstruction: { made in
            kept.append(made)  // Something holds it.
            if runs.increment() == 1 { throw Refused() }
        }
        #expect(throws: InjectionError.self) { try container.resolve(WeakProbe.self) }
        let failed = try #require(kept.values.first)
        #expect(try container.resolve(WeakProbe.self) !== failed)
    }

    @Test("a failing postConstruction evicts only its own instance, not a newer one its registration cached after a reset")
    func failureSparesANewerInstanceOfTheSameRegistration() throws {
        let container = InjectionContainer()
        let runs = Counter(), newer = Collector<WeakProbe>()
        container.register(WeakProbe.self) { WeakProbe() } postConstruction: { [unowned container] _ in  // No cycle.
            guard runs.increment() == 1 else { return }
            // A new scope, in which another thread builds and caches the next instance, then this one fails.
            container.resetCurrentContainer()
            let done = Gate()
            onThread {
                if let made = try? container.resolve(WeakProbe.self) { newer.append(made) }
                done.open()
            }
            _ = done.wait()
            throw Refused()
        }
        #expect(throws: InjectionError.self) { try container.resolve(WeakProbe.self) }
        let cached = try #require(newer.values.first)
        #expect(try container.resolve(WeakProbe.self) === cached, "the failure evicted the newer instance")
    }

    @Test("a failed deferred postConstruction spares what its registration cached 256 scopes later, a class or a value", arguments: [true, false])
    func failureSparesAnInstanceStoredAfterTheStoreCountWrapped(asClass: Bool) throws {
        // A store count of one byte repeats after 256 stores: the scope tells the stores apart.
        let container = InjectionContainer()
        let serials = Counter()
        @Sendable func serial(_ value: Any) -> Int { (value as? Serial)?.number ?? (value as! SerialValue).number }
        let postConstruction: @Sendable (Any) throws -> Void = { made in
            if serial(made) == 1 { throw Refused() }  // Only the first instance, built inside Root's resolve.
        }
        if asClass {
            container.register(Serial.self) { Serial(serials.increment()) } postConstruction: { try postConstruction($0) }
        } else {
            container.register(SerialValue.self) { SerialValue(number: serials.increment()) } postConstruction: { try postConstruction($0) }
        }
        let resolveSerial: @Sendable () throws -> Int = { [unowned container] in  // Registered below: no cycle.
            asClass ? try container.resolve(Serial.self).number : try container.resolve(SerialValue.self).number
        }
        let inRoot = Latch(), proceed = Latch(), rootDone = Gate()
        container.register(AsyncRoot.self) {
            _ = try resolveSerial()  // Cached now; its postConstruction is deferred to the end of this resolve.
            inRoot.open()
            proceed.wait()
            return AsyncRoot()
        }
        onThread {
            _ = try? container.resolve(AsyncRoot.self)
            rootDone.open()
        }
        #expect(inRoot.wait())
        for _ in 0..<256 {  // 256 more stores into the same registration, one a scope.
            container.resetCurrentContainer()
            _ = try resolveSerial()
        }
        let current = try resolveSerial()
        proceed.open()
        #expect(rootDone.wait())
        #expect(try resolveSerial() == current, "the failure evicted the current scope's instance, which was built again")
        #expect(serials.value == 257, "one build for Root's resolve, one a scope after it")
    }

    // MARK: On every path

    @Test("a transient served from the thread cache still runs its graph's postConstruction, and frees it")
    func transientFastPathRunsDeferredWork() throws {
        let deinits = Counter()
        InjectionManager.register(Holder.self, lifetime: .transient) { Holder(part: Inject()) }
        InjectionManager.register(Part.self, lifetime: .transient) { Part(deinits: deinits) } postConstruction: { $0.isConstructed = true }
        for round in 0..<6 {
            if round >= 2 {
                #expect(InjectionProbe.threadCacheEntry(for: Holder.self, in: InjectionManager.currentContainer) == .factory, "round \(round)")
            }
            let holder = try InjectionManager.resolve(Holder.self)  // From the third on, served from the thread cache.
            #expect(holder.part.isConstructed)
        }
        #expect(deinits.value == 6)  // No deferred closure keeps a frame (and its part) alive.
    }

    @Test("child tasks resolving transients with postConstruction do not share deferred work")
    func siblingTasksDeferredWork() async throws {
        let deinits = Counter()
        InjectionManager.register(Part.self, lifetime: .transient) { Part(deinits: deinits) } postConstruction: { $0.isConstructed = true }
        InjectionManager.register(Holder.self, lifetime: .transient) { Holder(part: Inject()) }
        InjectionManager.register(AsyncRoot.self, lifetime: .transient) { () async -> AsyncRoot in
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { Inject(Holder.self).part.isConstructed } }
                for await constructed in group { #expect(constructed) }
            }
            return AsyncRoot()
        }
        for _ in 0..<5 { _ = try await InjectionManager.resolveAsync(AsyncRoot.self) }
        #expect(deinits.value == 40)
    }
}
