import Foundation
import Injection
import InjectionTesting
import Testing

// Regression tests for defects a review found in the resolution algorithm; each failed before its fix.

private final class Holder: Sendable {
    let part: Part
    init(part: Part) { self.part = part }
}
private final class Part: @unchecked Sendable {
    var isConstructed = false
    let deinits: Counter
    init(deinits: Counter) { self.deinits = deinits }
    deinit { deinits.increment() }
}
private final class SlowShared: Sendable {
    init() { Thread.sleep(forTimeInterval: 0.2) }
}
private final class AsyncRoot: Sendable {}
private struct Refused: Error {}

@MainActor
private final class MainModel {
    init() {}
}

@Suite("Review regressions", .isolatedInjection)
struct ReviewRegressionTests {
    @Test("a transient served from the thread cache still runs its graph's postConstruction, and frees it")
    func transientFastPathRunsDeferredWork() throws {
        let deinits = Counter()
        InjectionManager.register(Holder.self, lifetime: .transient) { Holder(part: Inject()) }
        InjectionManager.register(Part.self, lifetime: .transient) { Part(deinits: deinits) } postConstruction: { $0.isConstructed = true }
        for _ in 0..<6 {
            let holder = try InjectionManager.resolve(Holder.self)  // From the third on, served from the thread cache.
            #expect(holder.part.isConstructed)
        }
        #expect(deinits.value == 6)  // No deferred closure keeps a frame (and its part) alive.
    }

    @Test("child tasks of an async factory resolving the same slow type are not a cycle")
    func siblingTasksAreNotACycle() async throws {
        let errors = Collector<String>()
        let builds = Counter()
        InjectionManager.register(SlowShared.self) { builds.increment(); return SlowShared() }
        InjectionManager.register(AsyncRoot.self) { () async -> AsyncRoot in
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        do throws(InjectionError) { _ = try InjectionManager.resolve(SlowShared.self) } catch { errors.append(error.description) }
                    }
                }
            }
            return AsyncRoot()
        }
        _ = try await InjectionManager.resolveAsync(AsyncRoot.self)
        #expect(errors.values.isEmpty)
        #expect(builds.value == 1)
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

    @Test("resolveAsync of a main-actor type racing resets never fails")
    func mainActorAsyncRacingResets() async throws {
        let container = InjectionManager.currentContainer
        container.register(MainModel.self, isolation: MainActor.shared) { MainModel() }
        let stop = Counter()
        let resetter = Task.detached {
            while stop.value == 0 { container.resetCurrentContainer() }
        }
        let failures = Counter()
        for _ in 0..<5_000 {
            do throws(InjectionError) { _ = try await container.resolveAsync(MainModel.self) } catch { failures.increment() }
        }
        stop.increment()
        await resetter.value
        #expect(failures.value == 0)
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

    @Test("a resolution that began before a reset never caches what it builds after the reset")
    func staleResolutionDoesNotSeedTheNewScope() throws {
        let container = InjectionContainer()
        let resetDone = Latch(), started = Latch()
        container.register(Part.self) { Part(deinits: Counter()) }
        container.register(Holder.self) {
            started.open()
            resetDone.wait()
            return Holder(part: try InjectionManager.resolve(Part.self))  // Resolved after the reset.
        }
        let old = Collector<Holder>()
        let finished = Gate()
        onThread { old.append(try! container.resolve(Holder.self)); finished.open() }
        #expect(started.wait())
        container.resetCurrentContainer()
        resetDone.open()
        #expect(finished.wait())
        let newPart = try container.resolve(Part.self)
        #expect(old.values.first?.part !== newPart)
    }
}

private final class Top: Sendable {
    let middle: Middle
    init(middle: Middle) { self.middle = middle }
}
private final class Middle: Sendable {
    let part: Part
    init(part: Part) { self.part = part }
}

@Suite("Review regressions, part 2", .isolatedInjection)
struct ReviewRegressionTests2 {
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
}
