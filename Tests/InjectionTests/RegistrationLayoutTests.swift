import Foundation
import Injection
import Testing

// The registration's compact layout (56 bytes): the registering file as an interned two-byte index, the
// lifetime in two bits of the traits byte, the stores counter and the resettable position sharing one
// word, and whether a class is disposable remembered process-wide. What each of them must still get right.

private struct Refused: Error {}

private final class StampLeaf: Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}
private final class StampRoot: Sendable {
    let leaf: StampLeaf
    init(leaf: StampLeaf) { self.leaf = leaf }
}

/// Named as `Support/OtherCache.swift`'s private `Cache` is: the two are told apart by the registering file.
private final class Cache: Sendable {}
private enum LayoutCacheKey: InjectionKey { typealias Value = Cache }
private protocol CacheProtocol: AnyObject, Sendable {}
extension Cache: CacheProtocol {}

/// Classes whose instances one registration hands out in turn: the disposable answer is per class.
private class DisposableBase: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(_ disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}
private final class DisposableSub: DisposableBase, @unchecked Sendable {}
private final class PlainObject: Sendable {}
private final class GenericDisposable<T>: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(_ disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}
/// Disposable only as `ConditionalDisposable<Int>`.
private final class ConditionalDisposable<T>: @unchecked Sendable {
    let disposals: Counter
    init(_ disposals: Counter) { self.disposals = disposals }
}
extension ConditionalDisposable: InjectionDisposable where T == Int {
    func dispose() { disposals.increment() }
}
private final class DisposableFailure: Error, InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(_ disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}
private enum AlternatingKey: InjectionKey { typealias Value = AnyObject }
private enum OptionalDisposableKey: InjectionKey { typealias Value = DisposableBase? }
private enum ErrorKey: InjectionKey { typealias Value = any Error }

/// An instance of `GenericDisposable<[[...[Int]...]]>` (`depth` arrays) if `disposable`, else of
/// `ConditionalDisposable` of that type (disposable only at depth 0): a class new to the process per depth.
private func nestedInstance<T>(_: T.Type, depth: Int, disposable: Bool, _ disposals: Counter) -> AnyObject {
    if depth > 0 { return nestedInstance([T].self, depth: depth - 1, disposable: disposable, disposals) }
    return disposable ? GenericDisposable<T>(disposals) : ConditionalDisposable<T>(disposals)
}

/// Resolves from its container when it goes: a release under a library lock would deadlock or trap.
private final class ResolvesOnDeinit: @unchecked Sendable {
    unowned let container: InjectionContainer
    let deinits: Counter
    init(_ container: InjectionContainer, _ deinits: Counter) {
        self.container = container
        self.deinits = deinits
    }
    deinit {
        _ = try? container.resolve(PlainObject.self)
        deinits.increment()
    }
}
@MainActor private final class MainModel {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}

/// A key type per `T`: `ChurnKey<[[Int]]>` and the like, as many keys as the test wants.
private enum ChurnKey<T>: InjectionKey { typealias Value = DisposableBase }

/// Calls `body` with `ChurnKey<[...[Int]...]>` for `depth` arrays, through a generic function that
/// registers or resolves that key.
private protocol ChurnVisitor { func visit<Key: InjectionKey>(_ key: Key.Type) where Key.Value == DisposableBase }
private func withChurnKey<T>(_: T.Type, depth: Int, _ visitor: some ChurnVisitor) {
    if depth > 0 { return withChurnKey([T].self, depth: depth - 1, visitor) }
    visitor.visit(ChurnKey<T>.self)
}

private final class MovedLeaf: Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}
private final class MovedRoot: Sendable {}
private final class ListedBefore: Sendable {}
private final class CapturedByFactory: Sendable {}

@Suite("Registration layout")
struct RegistrationLayoutTests {
    // MARK: The stores counter

    /// A resolution whose nested `postConstruction` failed evicts that instance at once, and again when
    /// it undoes everything it cached, after the rest of its deferred `postConstruction` calls ran. In
    /// between, another thread may build and cache the next instance of the same registration, in the
    /// same scope: the second eviction must leave that one alone. With `othersFailing` 255, the other
    /// thread's resolves store (and, their own `postConstruction` failing, evict) the leaf 255 times first:
    /// store number 257 counts as 1 again in eight bits, as the failed leaf #1 did. The first eviction
    /// clears the stamp of the box it took, and the count of stores tells the two apart besides.
    @Test(
        "a failed postConstruction's second eviction leaves the instance another thread cached since, also after 256 stores",
        arguments: [InjectionLifetime.scoped, .singleton], [0, 255])
    func secondEvictionSparesNewerInstance(lifetime: InjectionLifetime, othersFailing: Int) async {
        let kept = othersFailing + 2  // The serial of the leaf the other thread gets and caches.
        let outcome = await onOwnThread { () -> [String] in
            var problems: [String] = []
            let container = InjectionContainer()
            let builds = Counter()
            container.register(StampLeaf.self, lifetime: lifetime) {
                StampLeaf(serial: builds.increment())
            } postConstruction: { leaf in
                // #1 fails in the root's resolution; the next `othersFailing` in the other thread's.
                if leaf.serial < kept { throw Refused() }
            }
            let fromOtherThread = Collector<StampLeaf>()
            container.register(StampRoot.self) { [unowned container] in
                StampRoot(leaf: try container.resolve(StampLeaf.self))
            } postConstruction: { [unowned container] _ in
                // Runs after the leaf's postConstruction failed and evicted leaf #1.
                let done = Gate()
                onThread {
                    for _ in 0..<300 {
                        if let leaf = try? container.resolve(StampLeaf.self) {
                            fromOtherThread.append(leaf)
                            break
                        }
                    }
                    done.open()
                }
                done.wait()
            }
            do {
                _ = try container.resolve(StampRoot.self)
                problems.append("the root resolved, though its leaf's postConstruction threw")
            } catch {}
            guard let cached = fromOtherThread.values.first else { return problems + ["the other thread resolved no leaf"] }
            if cached.serial != kept { problems.append("the other thread got leaf #\(cached.serial), not #\(kept)") }
            let again = try? container.resolve(StampLeaf.self)
            if again !== cached {
                problems.append("the leaf the other thread cached (#\(cached.serial)) was evicted: resolving again built #\(again?.serial ?? -1)")
            }
            if builds.value != kept { problems.append("the leaf was built \(builds.value) times, not \(kept)") }
            return problems
        }
        #expect(outcome == [])
    }

    // MARK: The registering file, as an interned index

    /// Each way of registering keeps the file it was given, the replaced registration's file goes with it,
    /// and a copy of the container keeps them: a private type named like another is named with its file.
    @Test("a private type's name follows the file of its current registration, whichever way it was registered")
    func privateNameFollowsRegisteringFile() throws {
        let container = InjectionContainer()
        registerOtherFilesCache(in: container, file: "App/Other/Cache.swift")
        func names(_ container: InjectionContainer) -> [String] {
            container.dependencyGraph().nodes.map(\.name).filter { $0.contains("Cache (private") }.sorted()
        }
        func expected(_ file: String) -> [String] {
            ["InjectionTests.Cache (private, registered in App/Other/Cache.swift)",
             "InjectionTests.Cache (private, registered in \(file))"].sorted()
        }
        container.register(Cache.self, file: "App/One.swift") { Cache() }
        #expect(names(container) == expected("App/One.swift"))
        container.register(Cache.self, lifetime: .weak, file: "App/Two.swift") { Cache() }.postConstruction { _ in }
        #expect(names(container) == expected("App/Two.swift"))
        _ = try container.resolve(Cache.self)
        container.register(Cache.self, instance: Cache(), file: "App/Three.swift").postConstruction { _ in }
        #expect(names(container) == expected("App/Three.swift"))
        _ = try container.resolve(Cache.self)
        container.register(Cache.self, lifetime: .singleton, file: "App/Four.swift") { Cache() }
            .implements((any CacheProtocol).self, file: "App/Alias.swift") { $0 }
        #expect(names(container) == expected("App/Four.swift"))
        let copy = InjectionContainer(copying: container)
        #expect(names(copy) == expected("App/Four.swift"))
        copy.register(Cache.self, lifetime: .transient, file: "App/Five.swift") { Cache() }
        #expect(names(copy) == expected("App/Five.swift"))
        #expect(names(container) == expected("App/Four.swift"), "registering in the copy renamed the original's")
        container.resetCurrentContainer()
        container.unregister(Cache.self)
        // Its twin gone, the other is named as any type is.
        let left = container.dependencyGraph().nodes.map(\.name).filter { $0.contains("Cache") }.sorted()
        #expect(left == ["Cache", "CacheProtocol"], "\(left)")
    }

    /// Files first seen on many threads at once, interleaved with files seen before: every registration
    /// keeps its own, and the last-file shortcut never hands one thread's index to another's file.
    @Test("files interned on many threads at once: each registration keeps its own file")
    func filesInternedOnManyThreads() {
        let files: [StaticString] = [
            "Layout/A.swift", "Layout/B.swift", "Layout/C.swift", "Layout/D.swift",
            "Layout/E.swift", "Layout/F.swift", "Layout/G.swift", "Layout/H.swift",
        ]
        let problems = Collector<String>()
        let finished = runOnThreads(4) { thread in
            for round in 0..<150 {
                let container = InjectionContainer()
                registerOtherFilesCache(in: container, file: "Layout/Other.swift")
                let file = files[(thread * 3 + round) % files.count]
                container.register(Cache.self, file: file) { Cache() }
                let name = container.dependencyGraph().nodes.map(\.name).first { $0.contains("Layout/") && !$0.contains("Other") }
                let wanted = "InjectionTests.Cache (private, registered in \(file))"
                if name != wanted { problems.append("thread \(thread), round \(round): \(name ?? "none"), not \(wanted)") }
            }
        }
        #expect(finished)
        #expect(problems.values.prefix(5) == [])
    }

    // MARK: The lifetime, in two bits of the traits

    /// Every lifetime, registered every way, reads back as registered (the graph, and the behaviour:
    /// cached or not, kept across a reset or not), before and after a copy.
    @Test("every lifetime reads back from its two bits, for every way of registering", arguments: [
        InjectionLifetime.scoped, .singleton, .transient, .weak,
    ])
    func lifetimeReadsBack(lifetime: InjectionLifetime) async throws {
        let container = InjectionContainer()
        container.register(Cache.self, lifetime: lifetime) { Cache() }
        container.register(LayoutCacheKey.self, lifetime: lifetime) { Cache() }.postConstruction { _ in }
        container.register(PlainObject.self, lifetime: lifetime, isolation: MainActor.shared) { PlainObject() }
        container.register(StampLeaf.self, lifetime: lifetime) { () async in StampLeaf(serial: 0) }
        let copy = InjectionContainer(copying: container)
        for box in [container, copy] {
            let lifetimes = Dictionary(uniqueKeysWithValues: box.dependencyGraph().nodes.map { ($0.name, $0.lifetime) })
            for name in ["InjectionTests.Cache", "Cache", "LayoutCacheKey", "PlainObject", "StampLeaf"] where lifetimes[name] != nil {
                #expect(lifetimes[name] == lifetime, "\(name): \(String(describing: lifetimes[name]))")
            }
            #expect(lifetimes.count == 4, "\(lifetimes)")
            var kept: [AnyObject] = []
            let first = try box.resolve(Cache.self), second = try box.resolve(Cache.self)
            let firstKey = try box.resolve(LayoutCacheKey.self), secondKey = try box.resolve(LayoutCacheKey.self)
            let firstAsync = try await box.resolveAsync(StampLeaf.self), secondAsync = try await box.resolveAsync(StampLeaf.self)
            kept += [first, second, firstKey, secondKey, firstAsync, secondAsync]
            #expect((first === second) == (lifetime != .transient))
            #expect((firstKey === secondKey) == (lifetime != .transient))
            #expect((firstAsync === secondAsync) == (lifetime != .transient))
            box.resetCurrentContainer()
            let afterReset = try box.resolve(Cache.self)
            #expect((afterReset === first) == (lifetime == .singleton))
            withExtendedLifetime(kept) {}
        }
    }

    // MARK: Whether a class is disposable, remembered process-wide

    /// One registration whose instances alternate between classes: disposable ones (a subclass of a
    /// disposable class, a generic one, a conditional conformance that holds) and others (a plain class, a
    /// conditional conformance that does not hold). Each eviction tells exactly the disposable ones, once.
    @Test("dispose() reaches exactly the disposable instances when one registration's classes alternate")
    func disposableAnswersPerClassWhenClassesAlternate() {
        let container = InjectionContainer()
        let disposals = Counter()
        let serial = Counter()
        container.register(AlternatingKey.self) {
            let next = serial.increment() - 1
            switch next % 6 {
            case 0: return DisposableSub(disposals)
            case 1: return PlainObject()
            case 2: return GenericDisposable<Int>(disposals)
            case 3: return ConditionalDisposable<String>(disposals)
            case 4: return ConditionalDisposable<Int>(disposals)
            default: return DisposableBase(disposals)
            }
        }
        var expected = 0
        for round in 0..<120 {
            _ = try? container.resolve(AlternatingKey.self)
            container.resetCurrentContainer()
            if [0, 2, 4, 5].contains(round % 6) { expected += 1 }
            if disposals.value != expected {
                Issue.record("round \(round): \(disposals.value) disposals, not \(expected)")
                return
            }
        }
    }

    /// An `Optional` and an `any Error` holding a disposable class instance are told, through a reset, an
    /// unregister and a re-registration; a `nil` is never cached, so never told.
    @Test("dispose() reaches a disposable instance inside an Optional or an any Error")
    func disposableInsideOptionalAndError() throws {
        let container = InjectionContainer()
        let disposals = Counter()
        let serial = Counter()
        container.register(OptionalDisposableKey.self) {
            let next = serial.increment() - 1
            return next % 3 == 2 ? nil : (next % 3 == 0 ? DisposableSub(disposals) : DisposableBase(disposals))
        }
        container.register(ErrorKey.self) { DisposableFailure(disposals) }
        var expected = 0
        for round in 0..<30 {
            let optional = try container.resolve(OptionalDisposableKey.self)
            _ = try container.resolve(ErrorKey.self)
            if optional != nil { expected += 1 }
            expected += 1
            switch round % 3 {
            case 0: container.resetCurrentContainer()
            case 1:
                container.unregister(ErrorKey.self)
                container.register(ErrorKey.self) { DisposableFailure(disposals) }
                if optional != nil { container.resetCurrentContainer() }
            default:
                container.register(OptionalDisposableKey.self) {
                    let next = serial.increment() - 1
                    return next % 3 == 2 ? nil : (next % 3 == 0 ? DisposableSub(disposals) : DisposableBase(disposals))
                }
                container.resetCurrentContainer()
            }
            #expect(disposals.value == expected, "round \(round)")
            if disposals.value != expected { return }
        }
    }

    /// Classes new to the process (a generic class of a new type each time), learned by several threads
    /// at once, each in a container of its own: each thread's disposable instances are each told once,
    /// and the others never.
    @Test("classes learned on several threads at once: each disposable instance told once, the others never")
    func disposableClassesLearnedOnManyThreads() {
        let threads = 4, depths = 40
        let results = Collector<String>()
        let finished = runOnThreads(threads) { thread in
            let container = InjectionContainer()
            let disposals = Counter()
            let serial = Counter()
            container.register(AlternatingKey.self) {
                let next = serial.increment() - 1
                // Depth next / 2; odd: the conditional class, not disposable beyond depth 0.
                return nestedInstance(Int.self, depth: next / 2, disposable: next % 2 == 0, disposals)
            }
            var expected = 0
            for next in 0..<(2 * depths) {
                _ = try? container.resolve(AlternatingKey.self)
                container.resetCurrentContainer()
                if next % 2 == 0 || next / 2 == 0 { expected += 1 }
            }
            if disposals.value != expected { results.append("thread \(thread): \(disposals.value) disposals, not \(expected)") }
        }
        #expect(finished)
        #expect(results.values == [])
    }

    /// Resolves of alternating classes race resets on other threads: no instance is told twice, and after
    /// the race each one cached then is told once by the last reset.
    @Test("alternating disposable classes under resets racing resolves: none told twice")
    func alternatingDisposablesUnderRacingResets() {
        final class Told: DisposableBase, @unchecked Sendable {
            let times = AtomicWord(0)
            override func dispose() {
                super.dispose()
                times.value += 1  // One thread tells it, if the container is right.
            }
        }
        let container = InjectionContainer()
        let disposals = Counter()
        let made = Collector<AnyObject>()
        let serial = Counter()
        container.register(AlternatingKey.self) {
            let next = serial.increment() - 1
            let object: AnyObject = next % 2 == 0 ? Told(disposals) : PlainObject()
            made.append(object)
            return object
        }
        let finished = runOnThreads(3) { thread in
            for _ in 0..<300 {
                if thread == 0 { container.resetCurrentContainer() } else { _ = try? container.resolve(AlternatingKey.self) }
            }
        }
        #expect(finished)
        container.resetCurrentContainer()
        let told = made.values.compactMap { $0 as? Told }
        #expect(told.allSatisfy { $0.times.value <= 1 }, "an instance was told more than once")
        #expect(disposals.value == told.reduce(0) { $0 + $1.times.value })
    }

    // MARK: Threads exiting, main-actor factories

    /// Short-lived threads fill their caches (scoped instances, transients, an instance whose deinit
    /// resolves) and exit, while another thread resets, registers again and unregisters the same keys: no
    /// hang, no crash, every resolve typed right, and every instance released, outside every lock.
    @Test("threads exit while resets and re-registrations evict their cache entries")
    func threadsExitWhileResetsEvict() {
        let container = InjectionContainer()
        let deinits = Counter(), built = Counter()
        @Sendable func registerAll() {
            container.register(StampLeaf.self) { StampLeaf(serial: built.increment()) }
            container.register(PlainObject.self, lifetime: .transient) { PlainObject() }
            container.register(ResolvesOnDeinit.self) { [unowned container] in ResolvesOnDeinit(container, deinits) }
            container.register(Cache.self, lifetime: .weak) { Cache() }
        }
        registerAll()
        let stop = AtomicWord(0)
        let changes = Gate()
        onThread {
            var round = 0
            while stop.value == 0 {
                switch round % 4 {
                case 0: container.resetCurrentContainer()
                case 1: registerAll()
                case 2:
                    container.unregister(ResolvesOnDeinit.self)
                    container.register(ResolvesOnDeinit.self) { [unowned container] in ResolvesOnDeinit(container, deinits) }
                default: container.resetCurrentContainer { registerAll() }
                }
                round += 1
            }
            changes.open()
        }
        let wrong = Collector<String>()
        var finished = true
        for _ in 0..<25 {
            finished = runOnThreads(4) { _ in
                for _ in 0..<3 {
                    if let leaf = try? container.resolve(StampLeaf.self), leaf.serial <= 0 { wrong.append("leaf #\(leaf.serial)") }
                    _ = try? container.resolve(PlainObject.self)
                    _ = try? container.resolve(ResolvesOnDeinit.self)
                    _ = try? container.resolve(Cache.self)
                }
            } && finished
            if !finished { break }
        }
        stop.value = 1
        #expect(changes.wait())
        #expect(finished, "a thread hung")
        #expect(wrong.values == [])
        container.resetCurrentContainer()
        container.unregister(ResolvesOnDeinit.self)
        #expect(container.liveInstancesFromPreviousScopes().filter { $0.contains("ResolvesOnDeinit") } == [])
    }

    /// Tasks hop to the main actor for a main-actor factory; half of them are cancelled before they
    /// start. Cancellation is not the factory's concern: every task gets the scope's one instance, built
    /// once per scope.
    @Test("resolveAsync of a main-actor type from cancelled and live tasks: one instance per scope, built once")
    func mainActorResolveFromCancelledTasks() async {
        let container = InjectionContainer()
        let builds = Counter()
        container.register(MainModel.self, isolation: MainActor.shared) { MainModel(serial: builds.increment()) }
        for round in 1...10 {
            var tasks: [Task<Int, any Error>] = []
            for index in 0..<8 {
                let task = Task.detached { try await container.resolveAsync(MainModel.self).serial }
                if index % 2 == 0 { task.cancel() }
                tasks.append(task)
            }
            var serials: Set<Int> = []
            for task in tasks {
                do { serials.insert(try await task.value) } catch { Issue.record("round \(round): \(error)") }
            }
            #expect(serials == [round], "round \(round): \(serials)")
            #expect(builds.value == round)
            container.resetCurrentContainer()
        }
    }

    /// A main-actor factory that gives up when its caller is cancelled: the build fails for that caller
    /// alone; the tasks that were not cancelled build it again and share it.
    @Test("a main-actor factory that throws for a cancelled caller fails that caller only")
    func mainActorFactoryCancelledCaller() async {
        let container = InjectionContainer()
        let builds = Counter()
        container.register(MainModel.self, isolation: MainActor.shared) {
            if Task.isCancelled { throw CancellationError() }
            return MainModel(serial: builds.increment())
        }
        for round in 1...10 {
            var tasks: [(cancelled: Bool, task: Task<Int, any Error>)] = []
            for index in 0..<6 {
                let task = Task.detached { try await container.resolveAsync(MainModel.self).serial }
                if index % 3 == 0 { task.cancel() }
                tasks.append((index % 3 == 0, task))
            }
            var serials: Set<Int> = []
            for (cancelled, task) in tasks {
                do {
                    serials.insert(try await task.value)
                } catch let error as InjectionError {
                    if !cancelled { Issue.record("round \(round): a task that was not cancelled failed: \(error)") }
                    #expect(error.underlyingError is CancellationError, "\(error)")
                } catch {
                    Issue.record("round \(round): \(error)")
                }
            }
            #expect(serials == [round], "round \(round): \(serials)")
            container.resetCurrentContainer()
        }
    }

    // MARK: The resettable position and the stores count, in one word

    /// Many scoped keys listed for the next reset, some replaced (each replacement swap-removes it from
    /// the list, moving the last one's position), some of whose instances a failed `postConstruction`
    /// evicts in between: every cached instance is told once (at its replacement or at the reset), a
    /// failed one never, and a reset after it leaves nothing behind.
    @Test("positions in the reset list move while stores are counted: every instance evicted once")
    func resettablePositionsAndStoresShareAWord() throws {
        struct Register: ChurnVisitor {
            let container: InjectionContainer, disposals: Counter, failing: Bool
            func visit<Key: InjectionKey>(_ key: Key.Type) where Key.Value == DisposableBase {
                let failing = failing, disposals = disposals
                let attempts = AtomicWord(0)
                container.register(key) { DisposableBase(disposals) } postConstruction: { _ in
                    // A failing key fails its first build, then succeeds.
                    let attempt = attempts.value
                    attempts.value = attempt + 1
                    if failing && attempt == 0 { throw Refused() }
                }
            }
        }
        struct Resolve: ChurnVisitor {
            let container: InjectionContainer, resolved: Collector<DisposableBase>
            func visit<Key: InjectionKey>(_ key: Key.Type) where Key.Value == DisposableBase {
                if let value = try? container.resolve(key) { resolved.append(value) }
            }
        }
        let container = InjectionContainer()
        let disposals = Counter()
        let keys = 48
        for depth in 0..<keys { withChurnKey(Int.self, depth: depth, Register(container: container, disposals: disposals, failing: depth % 5 == 0)) }
        var expected = 0
        for round in 0..<6 {
            let resolved = Collector<DisposableBase>()
            for depth in 0..<keys { withChurnKey(Int.self, depth: depth, Resolve(container: container, resolved: resolved)) }
            // A failing key's first build failed: it is built again, and that one is cached.
            for depth in 0..<keys where depth % 5 == 0 { withChurnKey(Int.self, depth: depth, Resolve(container: container, resolved: resolved)) }
            let cached = Set(resolved.values.map(ObjectIdentifier.init))
            #expect(cached.count == keys, "round \(round): \(cached.count) instances cached")
            // Replace a third of the keys, in an order that moves positions about.
            for depth in stride(from: round % 3, to: keys, by: 3).reversed() {
                withChurnKey(Int.self, depth: depth, Register(container: container, disposals: disposals, failing: false))
            }
            container.resetCurrentContainer()
            expected += keys
            #expect(disposals.value == expected, "round \(round): \(disposals.value) disposals, not \(expected)")
            if disposals.value != expected { return }
        }
        container.resetCurrentContainer()
        #expect(disposals.value == expected, "a reset after an empty scope told someone")
    }

    /// A nested instance is cached, then its place in the reset list moves (a type listed before it is
    /// unregistered, and the last one fills its place), then its deferred `postConstruction` fails: it is
    /// evicted all the same. The move writes the word the count of stores lives in.
    @Test("a failed postConstruction evicts its instance after the reset list moved it")
    func failedPostConstructionEvictsAfterPositionMoved() async {
        let outcome = await onOwnThread { () -> [String] in
            let container = InjectionContainer()
            let builds = Counter()
            container.register(ListedBefore.self) { ListedBefore() }
            container.register(MovedLeaf.self) { MovedLeaf(serial: builds.increment()) } postConstruction: { leaf in
                if leaf.serial == 1 { throw Refused() }
            }
            container.register(MovedRoot.self) { [unowned container] in
                _ = try container.resolve(MovedLeaf.self)  // Cached now, last in the reset list.
                let done = Gate()
                onThread {
                    container.unregister(ListedBefore.self)  // The leaf takes its place in the list.
                    done.open()
                }
                done.wait()
                return MovedRoot()
            }
            _ = try? container.resolve(ListedBefore.self)  // Listed first.
            var problems: [String] = []
            if (try? container.resolve(MovedRoot.self)) != nil { problems.append("the root resolved, though its leaf's postConstruction threw") }
            let leaf = try? container.resolve(MovedLeaf.self)
            if leaf?.serial != 2 { problems.append("resolving the leaf again returned #\(leaf?.serial ?? -1), not a new #2: the failed one stayed cached") }
            // And the list still works: a reset evicts the leaf.
            container.resetCurrentContainer()
            let afterReset = try? container.resolve(MovedLeaf.self)
            if afterReset?.serial != 3 { problems.append("after a reset the leaf is #\(afterReset?.serial ?? -1), not #3") }
            return problems
        }
        #expect(outcome == [])
    }

    /// A replaced or unregistered registration that stored instances (and was listed for the next reset)
    /// is let go at once, with what its factory captured: the reset list keeps no removed registration.
    @Test("a replaced registration that stored instances is let go at once, with what its factory captured")
    func replacedRegistrationIsLetGo() throws {
        let container = InjectionContainer()
        container.register(ListedBefore.self) { ListedBefore() }
        _ = try container.resolve(ListedBefore.self)
        weak var captured: CapturedByFactory?
        for round in 0..<3 {
            do {
                let object = CapturedByFactory()
                captured = object
                container.register(MovedLeaf.self) { [object] in _ = object; return MovedLeaf(serial: round) }
            }
            _ = try container.resolve(MovedLeaf.self)
            #expect(captured != nil)
            if round == 2 {
                container.unregister(MovedLeaf.self)
            } else {
                container.register(MovedLeaf.self) { MovedLeaf(serial: -1) }
            }
            #expect(captured == nil, "round \(round): the replaced registration is still held")
            _ = try? container.resolve(MovedLeaf.self)
        }
    }
}
