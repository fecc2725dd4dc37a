import Foundation
import Injection
import InjectionTesting
import Testing

// `postConstruction` runs once for every instance built, on every path (transients resolved again and
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
/// A pair with a check that says whether it came back intact.
private struct CheckedPair: Sendable {
    let serial: Serial
    let check: Int
    init(_ number: Int) {
        serial = Serial(number)
        check = number &* 31
    }
    var isIntact: Bool { check == serial.number &* 31 }
}
private struct Refused: Error {}

private final class EvictedLeaf: Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}
private final class EvictedRoot: Sendable {
    let leaf: EvictedLeaf
    init(leaf: EvictedLeaf) { self.leaf = leaf }
}
private final class CachedInner: Sendable { init() {} }
private final class SequenceLeaf: Sendable {}
private final class SequenceRoot: Sendable {
    let leaf: SequenceLeaf
    init(leaf: SequenceLeaf) { self.leaf = leaf }
}
private final class SequenceOther: Sendable {}

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
            container.reset()
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

    /// A resolution whose nested `postConstruction` failed evicts that instance at once, and again when
    /// it undoes everything it cached, after the rest of its deferred `postConstruction` calls ran. In
    /// between, another thread may build and cache the next instance of the same registration, in the
    /// same scope: the second eviction must leave that one alone. With `othersFailing` 255, the other
    /// thread's resolves build (and, their own `postConstruction` failing, evict) the leaf 255 times first.
    @Test(
        "a failed postConstruction's second eviction leaves alone the instance another thread cached since, however many builds failed in between",
        arguments: [InjectionLifetime.scoped, .singleton], [0, 255])
    func secondEvictionSparesNewerInstance(lifetime: InjectionLifetime, othersFailing: Int) async {
        let kept = othersFailing + 2  // The serial of the leaf the other thread gets and caches.
        let outcome = await onOwnThread { () -> [String] in
            var problems: [String] = []
            let container = InjectionContainer()
            let builds = Counter()
            container.register(EvictedLeaf.self, lifetime: lifetime) {
                EvictedLeaf(serial: builds.increment())
            } postConstruction: { leaf in
                // #1 fails in the root's resolution; the next `othersFailing` in the other thread's.
                if leaf.serial < kept { throw Refused() }
            }
            let fromOtherThread = Collector<EvictedLeaf>()
            container.register(EvictedRoot.self) { [unowned container] in
                EvictedRoot(leaf: try container.resolve(EvictedLeaf.self))
            } postConstruction: { [unowned container] _ in
                // Runs after the leaf's postConstruction failed and evicted leaf #1.
                let done = Gate()
                onThread {
                    for _ in 0..<300 {
                        if let leaf = try? container.resolve(EvictedLeaf.self) {
                            fromOtherThread.append(leaf)
                            break
                        }
                    }
                    done.open()
                }
                done.wait()
            }
            do {
                _ = try container.resolve(EvictedRoot.self)
                problems.append("the root resolved, though its leaf's postConstruction threw")
            } catch {}
            guard let cached = fromOtherThread.values.first else { return problems + ["the other thread resolved no leaf"] }
            if cached.serial != kept { problems.append("the other thread got leaf #\(cached.serial), not #\(kept)") }
            let again = try? container.resolve(EvictedLeaf.self)
            if again !== cached {
                problems.append("the leaf the other thread cached (#\(cached.serial)) was evicted: resolving again built #\(again?.serial ?? -1)")
            }
            if builds.value != kept { problems.append("the leaf was built \(builds.value) times, not \(kept)") }
            return problems
        }
        #expect(outcome == [])
    }

    @Test("a failed postConstruction leaves alone what a newer registration of its type cached meanwhile")
    func failureSparesANewerRegistration() throws {
        let container = InjectionContainer()
        let newer = Counter()
        container.register(CheckedPair.self, factory: { CheckedPair(0) }, postConstruction: { _ in
            // Re-registered while the first instance finishes, and resolved with the new registration,
            // which caches its own first instance; then the first one's postConstruction fails.
            container.register(CheckedPair.self) { CheckedPair(newer.increment()) }
            // On another thread: a resolve of the type from this postConstruction would be a cycle.
            let done = Latch()
            onThread {
                _ = try? container.resolve(CheckedPair.self)
                done.open()
            }
            _ = done.wait()
            throw Refused()
        })
        #expect(throws: InjectionError.self) { _ = try container.resolve(CheckedPair.self) }
        #expect(newer.value == 1)
        let cached = try container.resolve(CheckedPair.self)
        #expect(newer.value == 1, "the newer registration's instance was evicted: its factory ran \(newer.value) times")
        #expect(cached.isIntact)
    }

    // MARK: On every path

    @Test("a transient resolved again and again runs its graph's postConstruction every time, and frees it")
    func transientFastPathRunsDeferredWork() throws {
        let deinits = Counter()
        InjectionManager.register(Holder.self, lifetime: .transient) { Holder(part: Inject()) }
        InjectionManager.register(Part.self, lifetime: .transient) { Part(deinits: deinits) } postConstruction: { $0.isConstructed = true }
        for round in 0..<6 {
            let holder = try InjectionManager.resolve(Holder.self)  // From the second on, with its edges recorded.
            #expect(holder.part.isConstructed, "round \(round)")
        }
        #expect(deinits.value == 6)  // No deferred closure keeps a frame (and its part) alive.
    }

    @Test("child tasks resolving transients with postConstruction do not share deferred work")
    func siblingTasksDeferredWork() async throws {
        let deinits = Counter()
        InjectionManager.register(Part.self, lifetime: .transient) { Part(deinits: deinits) } postConstruction: { $0.isConstructed = true }
        InjectionManager.register(Holder.self, lifetime: .transient) { Holder(part: Inject()) }
        InjectionManager.registerAsync(AsyncRoot.self, lifetime: .transient) { () async -> AsyncRoot in
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { Inject(Holder.self).part.isConstructed } }
                for await constructed in group { #expect(constructed) }
            }
            return AsyncRoot()
        }
        for _ in 0..<5 { _ = try await InjectionManager.resolveAsync(AsyncRoot.self) }
        #expect(deinits.value == 40)
    }

    @Test("on one thread, a failing deferred postConstruction evicts only its own resolve's instances, and the next resolves run theirs")
    func consecutiveResolvesKeepTheirOwnDeferredWork() throws {
        let container = InjectionContainer()
        let leafPosts = Counter(), otherPosts = Counter()
        container.register(SequenceLeaf.self) { SequenceLeaf() } postConstruction: { _ in
            if leafPosts.increment() == 1 { throw Refused() }
        }
        container.register(SequenceRoot.self) { SequenceRoot(leaf: try InjectionManager.resolve()) }  // The running factory's container.
        container.register(SequenceOther.self) { SequenceOther() } postConstruction: { _ in otherPosts.increment() }
        let thread = SizedStackThread()
        defer { thread.stop() }
        thread.run {
            let failed = #expect(throws: InjectionError.self) { try container.resolve(SequenceRoot.self) }
            #expect(failed?.kind == .factoryFailed)
            // The next resolves on this thread: nothing of the failed one is left behind.
            let other = try? container.resolve(SequenceOther.self)
            #expect(other != nil)
            #expect(otherPosts.value == 1)
            let root = try? container.resolve(SequenceRoot.self)
            #expect(root != nil, "the root was evicted with its leaf, and builds again")
            #expect(leafPosts.value == 2)
            #expect(root?.leaf === (try? container.resolve(SequenceLeaf.self)))
            #expect(otherPosts.value == 1, "Other stays cached: the failure evicted only its own resolve's instances")
            #expect((try? container.resolve(SequenceOther.self)) === other)
        }
    }

    /// A scoped type whose `postConstruction` resolves a transient and fails every third time, resolved by
    /// threads and by tasks (`resolveAsync` of a synchronous factory) while another thread resets: every
    /// failure is the postConstruction's, and every instance built is released once.
    @Test("a failing postConstruction that resolves transients, sync and async, racing resets, leaves no instance behind")
    func failingPostConstructionRacingResets() async throws {
        let live = LiveTokens(), registrations = LiveTokens(), postRuns = Counter(), transientRuns = Counter()
        let failures = Collector<String>()
        let refused = Counter()
        do {
            let container = InjectionContainer()
            let token = CountedToken(0, serial: 0, live: registrations)
            container.register(CachedInner.self, lifetime: .transient) { _ = token; transientRuns.increment(); return CachedInner() }
            let postToken = CountedToken(1, serial: 0, live: registrations)
            container.register(ST0.self, lifetime: .scoped) {
                ST0(token: CountedToken(1, serial: postToken.serial, live: live))
            } postConstruction: { [unowned container] (instance: ST0) in
                for _ in 0..<3 { _ = try container.resolve(CachedInner.self) }
                if postRuns.increment() % 3 == 0 { throw Refused() }
            }
            for _ in 0..<2 { _ = try? container.resolve(CachedInner.self) }
            let workersDone = Counter(), syncResolves = Counter()
            let resetCount = AtomicWord(0)
            defer { print("failingPostConstructionRacingResets: \(syncResolves.value) sync resolves, \(resetCount.value) resets") }
            let threads = Task { await onOwnThread {  // Blocks a thread of its own, not one of the pool's.
                runOnThreads(3) { thread in
                    if thread == 0 {
                        var resets = 0
                        while workersDone.value < 2 || resets < 200 {
                            container.reset()
                            resets += 1
                        }
                        resetCount.value = resets
                    } else {
                        defer { workersDone.increment() }
                        for i in 0..<600 {
                            if i % 3 == thread { container.reset() }
                            do {
                                syncResolves.increment()
                                _ = try container.resolve(ST0.self)
                            } catch {
                                let error = error as! InjectionError
                                refused.increment()
                                if error.kind != .factoryFailed || !(error.underlyingError is Refused) { failures.append("sync: \(error)") }
                            }
                        }
                    }
                }
            } }
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        do {
                            _ = try await container.resolveAsync(ST0.self)
                        } catch {
                            let error = error as! InjectionError
                            refused.increment()
                            if error.kind != .factoryFailed || !(error.underlyingError is Refused) { failures.append("async: \(error)") }
                        }
                    }
                }
            }
            #expect(await threads.value)
            container.reset()
            // After a reset nothing of ST0 is alive.
            #expect(live.alive == 0, "\(live.alive) instances alive after the last reset")
        }
        #expect(refused.value > 0)
        print("failingPostConstructionRacingResets: \(postRuns.value) postConstruction runs, \(refused.value) refused, \(transientRuns.value) transients")
        #expect(failures.values.isEmpty, "\(failures.values.prefix(5))")
        #expect(waitUntil { live.alive == 0 && registrations.alive == 0 },
                "\(live.alive) instances, \(registrations.alive) registrations still alive")
    }
}
