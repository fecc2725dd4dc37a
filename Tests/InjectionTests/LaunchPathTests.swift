import Foundation
@_spi(Testing) import Injection
import Testing

// The launch path: `Box` stores its value inline (a `ManagedBuffer`), a build's handle is made by its first
// waiter, a thread reuses its last root `Resolution`, and a registration keeps every factory kind in two
// words. Each test says which guarantee it proves.

// MARK: - Fixtures

/// Counts the deinits of its instances, per test (each test makes its own `Deaths`).
private final class Deaths: @unchecked Sendable {  // Its state: under `lock`.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    func died(_ name: String) { lock.withLock { counts[name, default: 0] += 1 } }
    func count(_ name: String) -> Int { lock.withLock { counts[name, default: 0] } }
    var total: Int { lock.withLock { counts.values.reduce(0, +) } }
}

/// An object whose deinit is counted under `name`.
private final class Tracked: @unchecked Sendable {
    let name: String
    let deaths: Deaths
    init(_ name: String, _ deaths: Deaths) {
        self.name = name
        self.deaths = deaths
    }
    deinit { deaths.died(name) }
}

private protocol Shape: Sendable { var tag: Int { get } }
private struct Square: Shape {
    let tag: Int
    let tracked: Tracked
}

/// Over-aligned (16 bytes), with a reference in it.
private struct Aligned16: @unchecked Sendable {
    var vector: SIMD16<Float>
    var tracked: Tracked
    var byte: UInt8
}
private struct Empty: Sendable, Equatable {}
/// 64 words, a reference in the middle.
private struct Large: @unchecked Sendable {
    var head: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
               UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
               UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
               UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    var tracked: Tracked
    var tail: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
               UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
               UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
               UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
}
private enum Payload: @unchecked Sendable {
    case none
    case one(Tracked)
    case two(Tracked, SIMD4<Double>)
}

private func largeValue(_ tracked: Tracked) -> Large {
    var large = Large(
        head: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        tracked: tracked,
        tail: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    large.head.0 = 0xA1
    large.head.31 = 0xA2
    large.tail.0 = 0xB1
    large.tail.30 = 0xB2
    return large
}

private func isLarge(_ large: Large) -> Bool {
    large.head.0 == 0xA1 && large.head.31 == 0xA2 && large.tail.0 == 0xB1 && large.tail.30 == 0xB2
}

private enum LayoutKey: InjectionKey { typealias Value = Aligned16 }
/// One reference: stored in its registration's own words.
private struct Wrapper: Sendable {
    let tracked: Tracked
    init(_ tracked: Tracked) { self.tracked = tracked }
}
private enum WrapperKey: InjectionKey { typealias Value = Wrapper }

private final class MainModel: Sendable {}
private final class AsyncModel: Sendable {}
private final class CaptureOnly: Sendable {}
private protocol MainService: Sendable {}
extension MainModel: MainService {}
private protocol AsyncService: Sendable {}
extension AsyncModel: AsyncService {}

// MARK: - Box

@Suite("Box: inline storage of every layout")
struct BoxLayoutReviewTests {
    /// Registers one type of each layout in `container`; each holds a `Tracked` named after it.
    private func registerEveryLayout(in container: InjectionContainer, deaths: Deaths) {
        container.register(Aligned16.self) {
            Aligned16(vector: SIMD16<Float>(repeating: 1.5), tracked: Tracked("aligned", deaths), byte: 7)
        }
        container.register(Large.self) { largeValue(Tracked("large", deaths)) }
        container.register(Tracked?.self) { Tracked("optional", deaths) }
        container.register((any Shape).self) { Square(tag: 42, tracked: Tracked("existential", deaths)) }
        container.register(Any.self) { Tracked("any", deaths) as Any }
        container.register(Payload.self) { .two(Tracked("payload", deaths), SIMD4<Double>(1, 2, 3, 4)) }
        container.register(Tracked.self) { Tracked("class", deaths) }
        container.register(Empty.self) { Empty() }
        container.register(Void.self) { () }
        container.register(SIMD8<Double>.self) { SIMD8<Double>(repeating: 2.5) }
        container.register(LayoutKey.self) {
            Aligned16(vector: SIMD16<Float>(repeating: 3.5), tracked: Tracked("key", deaths), byte: 9)
        }
    }

    private static let names = ["aligned", "large", "optional", "existential", "any", "payload", "class", "key"]

    @Test("values of every layout come back intact, and each is destroyed exactly once by a reset and by removeAll")
    func everyLayoutRoundTripsAndIsDestroyedOnce() throws {
        let deaths = Deaths()
        let container = InjectionContainer()
        registerEveryLayout(in: container, deaths: deaths)
        for round in 1...2 {
            for _ in 0..<2 {  // The slow path, then this thread's cache.
                let aligned = try container.resolve(Aligned16.self)
                #expect(aligned.vector == SIMD16<Float>(repeating: 1.5))
                #expect(aligned.byte == 7)
                #expect(isLarge(try container.resolve(Large.self)))
                #expect(try container.resolve(Tracked?.self)?.name == "optional")
                #expect(try container.resolve((any Shape).self).tag == 42)
                #expect((try container.resolve(Any.self) as? Tracked)?.name == "any")
                guard case .two(let tracked, let vector) = try container.resolve(Payload.self) else {
                    Issue.record("the enum lost its case")
                    return
                }
                #expect(tracked.name == "payload")
                #expect(vector == SIMD4<Double>(1, 2, 3, 4))
                #expect(try container.resolve(Tracked.self).name == "class")
                #expect(try container.resolve(Empty.self) == Empty())
                try container.resolve(Void.self)
                #expect(try container.resolve(SIMD8<Double>.self) == SIMD8<Double>(repeating: 2.5))
                #expect(try container.resolve(LayoutKey.self).vector == SIMD16<Float>(repeating: 3.5))
            }
            #expect(deaths.total == 8 * (round - 1), "nothing is destroyed while cached")
            if round == 1 { container.resetCurrentContainer() } else { container.removeAll() }
            for name in Self.names { #expect(deaths.count(name) == round, "\(name)") }
        }
    }

    @Test("a released container destroys each cached instance once: in its registration or in a box, with or without rare parts")
    func releasedContainerDestroysEachCachedInstanceOnce() throws {
        let deaths = Deaths()
        do {
            let container = InjectionContainer()
            registerEveryLayout(in: container, deaths: deaths)  // Inline and boxed values; a key's value type.
            container.register(Wrapper.self) { Wrapper(Tracked("post", deaths)) }  // Inline, with postConstruction.
                .postConstruction { _ in }
            container.register(WrapperKey.self) { Wrapper(Tracked("wrapper key", deaths)) }  // Inline, a key's value type.
            for _ in 0..<2 {
                _ = try container.resolve(Aligned16.self)
                _ = try container.resolve(Large.self)
                _ = try container.resolve(Tracked?.self)
                _ = try container.resolve((any Shape).self)
                _ = try container.resolve(Any.self)
                _ = try container.resolve(Payload.self)
                _ = try container.resolve(Tracked.self)
                _ = try container.resolve(LayoutKey.self)
                _ = try container.resolve(Wrapper.self)
                _ = try container.resolve(WrapperKey.self)
            }
            #expect(deaths.total == 0, "nothing is destroyed while cached")
        }
        for name in Self.names + ["post", "wrapper key"] { #expect(deaths.count(name) == 1, "\(name)") }
    }

    @Test("resolveAsync and InjectLazy hand out every layout intact, and destroy their boxes exactly once")
    func everyLayoutThroughAsyncAndLazy() async throws {
        let deaths = Deaths()
        do {
            let container = InjectionContainer()
            registerEveryLayout(in: container, deaths: deaths)
            container.register(Aligned16.self, lifetime: .transient) {
                Aligned16(vector: SIMD16<Float>(repeating: 4.5), tracked: Tracked("async", deaths), byte: 1)
            }
            let fromTask = try await container.resolveAsync(Aligned16.self)
            #expect(fromTask.vector == SIMD16<Float>(repeating: 4.5))
            #expect(isLarge(try await container.resolveAsync(Large.self)))
            #expect(try await container.resolveAsync((any Shape).self).tag == 42)
            let lazyAligned = InjectionManager.withContainer(container) { InjectLazy(Aligned16.self) }
            let lazyShape = InjectionManager.withContainer(container) { InjectLazy((any Shape).self) }
            let lazyLarge = InjectionManager.withContainer(container) { InjectLazy(Large.self) }
            #expect(try lazyAligned.resolve().vector == SIMD16<Float>(repeating: 4.5))
            #expect(try lazyAligned.resolve().byte == 1)
            #expect(try lazyShape.resolve().tag == 42)
            #expect(isLarge(try lazyLarge.resolve()))
        }
        // The container, its instances and the lazy handles are gone.
        #expect(deaths.count("async") == 2)
        #expect(deaths.count("existential") == 1)
        #expect(deaths.count("large") == 1)
    }
}

// MARK: - Registration: every factory kind in two words

@Suite("Registration: factory words of every kind")
struct FactoryWordsReviewTests {
    @MainActor
    @Test("main-actor and async factories, a plain factory that captures, copies, implements aliases and postConstruction steps release what the factories captured exactly once")
    func everyKindReleasesItsCaptureOnce() async throws {
        let deaths = Deaths()
        weak var mainCapture: Tracked?
        weak var asyncCapture: Tracked?
        weak var plainCapture: Tracked?
        weak var onlyCapture: Tracked?
        do {
            let container = InjectionContainer()
            let main = Tracked("main factory", deaths), async = Tracked("async factory", deaths)
            let plain = Tracked("plain factory", deaths)
            mainCapture = main
            asyncCapture = async
            plainCapture = plain
            // Kept apart from the registration, which holds a context-free factory's function alone.
            let only = Tracked("capturing factory", deaths)
            onlyCapture = only
            container.register(CaptureOnly.self) { _ = only; return CaptureOnly() }
            container.register(MainModel.self, isolation: MainActor.shared) { _ = main; return MainModel() }
                .implements((any MainService).self) { $0 }
                .postConstruction { _ in _ = main }
            container.register(AsyncModel.self) { () async -> AsyncModel in _ = async; return AsyncModel() }
                .implements((any AsyncService).self) { $0 }
            container.register(Formatter.self) { _ = plain; return Formatter() }
                .postConstruction { _ in _ = plain }
            let copies = (0..<3).map { _ in InjectionContainer(copying: container) }
            for resolving in [container] + copies {
                let model = try resolving.resolve(MainModel.self)
                #expect(try resolving.resolve((any MainService).self) as AnyObject === model)
                let asyncModel = try await resolving.resolveAsync(AsyncModel.self)
                #expect(try await resolving.resolveAsync((any AsyncService).self) as AnyObject === asyncModel)
                _ = try resolving.resolve(Formatter.self)
                _ = try resolving.resolve(CaptureOnly.self)
            }
            // Re-registering releases the old registrations' holders (the new ones hold the same captures).
            container.register(MainModel.self, isolation: MainActor.shared) { _ = main; return MainModel() }
            container.register(AsyncModel.self) { () async -> AsyncModel in _ = async; return AsyncModel() }
            container.register(CaptureOnly.self) { _ = only; return CaptureOnly() }
            #expect(try container.resolve(CaptureOnly.self) !== copies[2].resolve(CaptureOnly.self))
            #expect(try container.resolve(MainModel.self) !== copies[0].resolve(MainModel.self))
            _ = try await copies[1].resolveAsync(AsyncModel.self)
            #expect(deaths.total == 0, "a copy still holds every factory")
        }
        #expect(mainCapture == nil)
        #expect(asyncCapture == nil)
        #expect(plainCapture == nil)
        #expect(onlyCapture == nil)
        #expect(deaths.count("capturing factory") == 1)
        #expect(deaths.count("main factory") == 1)
        #expect(deaths.count("async factory") == 1)
        #expect(deaths.count("plain factory") == 1)
    }
}

// MARK: - A build's handle, made by its first waiter

/// How a build that threads and tasks wait for ends.
enum BuildEnd: String, CaseIterable, Sendable {
    case finishes, fails, reset, reregistered, unregistered, removeAll
}

private struct FirstRunFails: Error {}
private final class Slow: Sendable {
    let run: Int
    init(run: Int) { self.run = run }
}

@Suite("Lazy build handles: every waiter is woken")
struct BuildHandleReviewTests {
    @Test("threads and tasks waiting for a build are all woken however the build ends", arguments: BuildEnd.allCases)
    func waitersAreWokenHoweverTheBuildEnds(end: BuildEnd) async throws {
        let container = InjectionContainer()
        let runs = Counter(), started = Latch(), release = Latch()
        let register = {
            _ = container.register(Slow.self) {
                let run = runs.increment()
                if run == 1 {
                    started.open()
                    // A safety net only: the test opens `release` itself. The cooperative pool, which the
                    // waiting tasks and this test's body need, may be held by other tests' blocking waits
                    // for many seconds under load; the build must not end before every waiter is counted.
                    _ = release.wait(seconds: 600)
                    if end == .fails { throw FirstRunFails() }
                }
                return Slow(run: run)
            }
        }
        register()
        let builderDone = Latch()
        onThread {
            _ = try? container.resolve(Slow.self)
            builderDone.open()
        }
        #expect(started.wait())
        let threadsDone = Counter()
        let threadResults = Collector<Result<Int, InjectionError>>()
        for _ in 0..<3 {
            onThread {
                do throws(InjectionError) {
                    threadResults.append(.success(try container.resolve(Slow.self).run))
                } catch {
                    threadResults.append(.failure(error))
                }
                threadsDone.increment()
            }
        }
        let tasks = (0..<3).map { _ in
            Task.detached { () -> Result<Int, InjectionError> in
                do throws(InjectionError) { return .success(try await container.resolveAsync(Slow.self).run) } catch { return .failure(error) }
            }
        }
        // Every task suspended in the build's waiters (at least one thread waits too). The tasks need the
        // cooperative pool, which other tests' blocking waits may hold for a minute (seen under
        // ThreadSanitizer with the machine loaded).
        await poll { InjectionProbe.asyncWaiterCount(for: Slow.self, in: container) >= 3 }
        #expect(InjectionProbe.asyncWaiterCount(for: Slow.self, in: container) == 3, "the tasks never waited (\(end))")
        #expect(InjectionProbe.buildHasWaiters(for: Slow.self, in: container))
        switch end {
        case .finishes, .fails: release.open()
        case .reset: container.resetCurrentContainer()
        case .reregistered: register()
        case .unregistered: container.unregister(Slow.self)
        case .removeAll: container.removeAll()
        }
        // Every waiter returns, while the build itself may still be blocked (reset, re-registration...).
        let threadsWoke = threadsDone.wait(atLeast: 3)
        #expect(threadsWoke, "a thread waiting for the build was never woken (\(end))")
        if !threadsWoke {
            release.open()
            return
        }
        // Never await a task unbounded: a waiter nobody resumes would hang the test run, not fail it.
        let tasksDone = AsyncGate()
        let collected = Collector<Result<Int, InjectionError>>()
        Task {
            for task in tasks { collected.append(await task.value) }
            tasksDone.open()
        }
        let timer = tasksDone.opens()  // A deadline, not a pause: it ends the wait only if a task is never woken.
        await tasksDone.wait()
        timer.cancel()
        let taskResults = collected.values
        #expect(taskResults.count == 3, "a task waiting for the build was never woken (\(end))")
        release.open()
        #expect(builderDone.wait())
        for result in threadResults.values + taskResults {
            switch (end, result) {
            case (.unregistered, .failure(let error)), (.removeAll, .failure(let error)):
                #expect(error.kind == .notRegistered)
            case (.finishes, .success(let run)):
                #expect(run == 1, "waiters share the build they waited for")
            case (.fails, .success(let run)), (.reset, .success(let run)), (.reregistered, .success(let run)):
                #expect(run == 2, "waiters of an abandoned or failed build share one rebuild")
            default:
                Issue.record("unexpected \(result) after \(end)")
            }
        }
    }
}

// MARK: - A build in flight, kept where a cached instance goes

/// Two words, a heap `String` among them: cached in its registration's own words.
private struct Text: Sendable, Equatable { let text: String }
private struct PostConstructionRefused: Error {}
private final class Held: Sendable {
    let run: Int
    init(run: Int) { self.run = run }
}

@Suite("A build in flight and the instance in its registration's words")
struct BuildInFlightTests {
    @Test("a value kept in its registration's words: a build abandoned with a waiter, the waiter's rebuild, an eviction by a failing postConstruction, and the build after it")
    func inlineValueThroughAbandonedAndEvictedBuilds() throws {
        let container = InjectionContainer()
        let entered = Gate(), release = Gate()
        let runs = Counter(), refusals = Counter()
        let refuseNext = Latch()
        container.register(Text.self) {
            let run = runs.increment()
            if run == 1 {
                entered.open()
                release.wait()
            }
            return Text(text: "a string too long to fit in a String's own words, run \(run)")
        } postConstruction: { _ in
            if refuseNext.wait(seconds: 0) && refusals.increment() == 1 { throw PostConstructionRefused() }
        }
        let results = Collector<Text?>()
        onThread { results.append(try? container.resolve(Text.self)) }
        #expect(entered.wait())
        onThread { results.append(try? container.resolve(Text.self)) }
        #expect(waitUntil { InjectionProbe.buildHasWaiters(for: Text.self, in: container) })
        container.resetCurrentContainer()  // Abandons the build: its waiter builds again, and caches.
        #expect(waitUntil { results.values.count == 1 })
        release.open()
        #expect(waitUntil { results.values.count == 2 })
        let cached = try container.resolve(Text.self)
        #expect(cached.text.hasSuffix("run 2"), "the waiter's rebuild is cached; the abandoned build's value is not")
        #expect(Set(results.values.compactMap { $0?.text }).count == 2)

        container.resetCurrentContainer()
        refuseNext.open()
        #expect(throws: InjectionError.self) { try container.resolve(Text.self) }  // Built, cached, then evicted.
        let rebuilt = try container.resolve(Text.self)
        #expect(rebuilt.text.hasSuffix("run 4"))
        #expect(try container.resolve(Text.self) == rebuilt)
        let fromThreads = Collector<Text?>()
        #expect(runOnThreads(4) { _ in fromThreads.append(try? container.resolve(Text.self)) })
        #expect(fromThreads.values.count == 4 && fromThreads.values.allSatisfy { $0 == rebuilt })
    }

    @Test("a .weak instance that died is built again while another thread waits, and a registration replaces it mid-build")
    func weakRebuildWithWaiterAndReplacement() throws {
        let container = InjectionContainer()
        let entered = Gate(), release = Gate()
        let runs = Counter()
        container.register(Held.self, lifetime: .weak) {
            let run = runs.increment()
            if run == 2 {
                entered.open()
                release.wait()
            }
            return Held(run: run)
        }
        #expect(try container.resolve(Held.self).run == 1)  // Held weakly, then gone: its registration keeps a dead reference.
        let results = Collector<Int>()
        onThread { results.append((try? container.resolve(Held.self))?.run ?? -1) }
        #expect(entered.wait())
        onThread { results.append((try? container.resolve(Held.self))?.run ?? -1) }
        #expect(waitUntil { InjectionProbe.buildHasWaiters(for: Held.self, in: container) })
        container.register(Held.self, lifetime: .weak) { Held(run: 100 + runs.increment()) }
        release.open()
        #expect(waitUntil { results.values.count == 2 })
        #expect(results.values.contains(2), "the build that was replaced still returns its value to its own resolve")
        #expect(results.values.allSatisfy { $0 > 0 })
        let held = try container.resolve(Held.self)
        #expect(held.run > 100, "the new registration builds")
        #expect(try container.resolve(Held.self) === held)
    }
}

// MARK: - A thread's recycled resolution

private final class Root: Sendable {
    let leaf: Leaf
    init(leaf: Leaf) { self.leaf = leaf }
}
private final class Leaf: Sendable {}
private final class Other: Sendable {}
private struct LeafRefused: Error {}

private final class Ping: Sendable { init(_ pong: Pong) {} }
private final class Pong: Sendable { init(_ ping: Ping) {} }

@Suite("Recycled resolutions")
struct RecycledResolutionTests {
    @Test("on one thread, a failing deferred postConstruction evicts only its own resolve's instances, and the next resolves run theirs")
    func consecutiveResolvesKeepTheirOwnDeferredWork() throws {
        let container = InjectionContainer()
        let leafPosts = Counter(), otherPosts = Counter()
        container.register(Leaf.self) { Leaf() } postConstruction: { _ in
            if leafPosts.increment() == 1 { throw LeafRefused() }
        }
        container.register(Root.self) { Root(leaf: try InjectionManager.resolve()) }  // The running factory's container.
        container.register(Other.self) { Other() } postConstruction: { _ in otherPosts.increment() }
        let thread = SizedStackThread()
        defer { thread.stop() }
        thread.run {
            let failed = #expect(throws: InjectionError.self) { try container.resolve(Root.self) }
            #expect(failed?.kind == .factoryFailed)
            // The next resolves on this thread reuse its resolution: nothing of the failed one is left in it.
            let other = try? container.resolve(Other.self)
            #expect(other != nil)
            #expect(otherPosts.value == 1)
            let root = try? container.resolve(Root.self)
            #expect(root != nil, "the root was evicted with its leaf, and builds again")
            #expect(leafPosts.value == 2)
            #expect(root?.leaf === (try? container.resolve(Leaf.self)))
            #expect(otherPosts.value == 1, "Other stays cached: the failure evicted only its own resolve's instances")
            #expect((try? container.resolve(Other.self)) === other)
        }
    }

    @Test("a factory that resolves from another container, whose factory resolves back and defers postConstruction, works resolve after resolve on one thread")
    func reentrantContainersOnOneThread() throws {
        let outer = InjectionContainer(), inner = InjectionContainer()
        let outerPosts = Counter(), innerPosts = Counter()
        // Each factory resolves the other container through a weak reference: no cycle keeps them alive.
        outer.register(Leaf.self) { Leaf() }
        outer.register(Root.self) { [weak inner] in
            _ = try inner!.resolve(Other.self)
            return Root(leaf: try InjectionManager.resolve())
        } postConstruction: { _ in outerPosts.increment() }
        inner.register(Other.self) { [weak outer] in
            _ = try outer!.resolve(Leaf.self)
            return Other()
        } postConstruction: { _ in innerPosts.increment() }
        let thread = SizedStackThread()
        defer { thread.stop() }
        try thread.run {
            for round in 1...3 {
                let root = try outer.resolve(Root.self)
                #expect(root === (try outer.resolve(Root.self)))
                #expect(outerPosts.value == round)
                #expect(innerPosts.value == round)
                let bound = try InjectionManager.withContainer(inner) { try InjectionManager.resolve(Other.self) }
                #expect(bound === (try inner.resolve(Other.self)))
                outer.resetCurrentContainer()
                inner.resetCurrentContainer()
            }
        }
    }

    @Test("a cycle across two threads is reported, never a deadlock, when both threads resolve with recycled resolutions")
    func crossThreadCycleWithRecycledResolutions() {
        let container = InjectionContainer()
        let bothIn = Barrier(count: 2), arrivals = Counter()
        // Both builds are under way before either resolves the other (a rebuild after the cycle does not wait).
        container.register(Ping.self) {
            if arrivals.increment() <= 2 { bothIn.arrive() }
            return Ping(try InjectionManager.resolve())
        }
        container.register(Pong.self) {
            if arrivals.increment() <= 2 { bothIn.arrive() }
            return Pong(try InjectionManager.resolve())
        }
        let errors = Collector<InjectionError.Kind>()
        let finished = runOnThreads(2) { index in
            // Resolutions that end on this thread, so its next one is a recycled one.
            let warm = InjectionContainer()
            warm.register(Leaf.self) { Leaf() }
            for _ in 0..<50 {
                warm.resetCurrentContainer()
                _ = try? warm.resolve(Leaf.self)
            }
            do throws(InjectionError) {
                if index == 0 { _ = try container.resolve(Ping.self) } else { _ = try container.resolve(Pong.self) }
            } catch {
                errors.append(error.kind)
            }
        }
        #expect(finished, "the cross-thread cycle deadlocked")
        #expect(errors.values.contains(.cycle))
    }
}
