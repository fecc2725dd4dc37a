import Foundation
import Injection
import InjectionTesting
import Testing

// What a reset, an unregister or a re-registration evicts, and who is told: every evicted instance is
// told once (`dispose()`), by its own class, outside the lock, so it may use the container; singletons are
// kept, and a supplied instance stays its owner's.

private final class Socket: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() {
        disposals.increment()
        // dispose() runs outside the lock, so it may use the container.
        _ = InjectionManager.isRegistered(Socket.self)
    }
}

private final class AdvDisposableDB: InjectionDisposable, @unchecked Sendable {
    private let lock = NSLock()
    private var disposals = 0
    var disposeCount: Int { lock.withLock { disposals } }
    func dispose() { lock.withLock { disposals += 1 } }
}

/// An error that is a class: an `any Error` holding it keeps it in a box of the error's own.
private final class ClassFailure: Error, InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}
private final class SessionScoped: Sendable {}
private final class WeakThing: Sendable {}
private final class AsyncThing: Sendable {}
private final class SessionDisposable: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}

private protocol Connection: AnyObject, Sendable {}
private final class PlainConnection: Connection {}
private final class ClosingConnection: Connection, InjectionDisposable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}

private final class DisposeMarker: Sendable {}
private final class CountedDisposable: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}
private let twiceDisposed = Collector<ObjectIdentifier>()
/// Whose dispose() resets its own container and registers again in it.
private final class ResettingDisposable: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    unowned let container: InjectionContainer
    init(disposals: Counter, container: InjectionContainer) {
        self.disposals = disposals
        self.container = container
    }
    private let own = Counter()
    func dispose() {
        disposals.increment()
        if own.increment() > 1 { twiceDisposed.append(ObjectIdentifier(self)) }
        container.reset()
        container.register(DisposeMarker.self) { DisposeMarker() }
        _ = try? container.resolve(DisposeMarker.self)
    }
}

private struct Refused: Error {}

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

/// A key type per `T`: `ChurnKey<[[Int]]>` and the like, as many keys as the test wants.
private enum ChurnKey<T>: InjectionKey { typealias Value = DisposableBase }

/// Calls `body` with `ChurnKey<[...[Int]...]>` for `depth` arrays, through a generic function that
/// registers or resolves that key.
private protocol ChurnVisitor { func visit<Key: InjectionKey>(_ key: Key.Type) where Key.Value == DisposableBase }
private func withChurnKey<T>(_: T.Type, depth: Int, _ visitor: some ChurnVisitor) {
    if depth > 0 { return withChurnKey([T].self, depth: depth - 1, visitor) }
    visitor.visit(ChurnKey<T>.self)
}

@Suite("Eviction and disposal")
struct EvictionTests {
    @Test("an optional registration's disposable instance is told even after a non-disposable one of the same registration")
    func optionalInstancesAreToldByTheirOwnType() throws {
        // An Optional's own type is the same whichever class it wraps: whether to call dispose() is a
        // question for the wrapped instance.
        let container = InjectionContainer()
        let disposals = Counter()
        let builds = Counter()
        container.register((any Connection)?.self) { () -> (any Connection)? in
            builds.increment()
            return builds.value % 2 == 1 ? PlainConnection() : ClosingConnection(disposals: disposals)
        }
        #expect(try container.resolve((any Connection)?.self) is PlainConnection)
        container.reset()
        #expect(try container.resolve((any Connection)?.self) is ClosingConnection)
        container.reset()
        #expect(disposals.value == 1)
    }

    @Test("every reset tells and releases each instance by its own class: a class, and a class existential whose class alternates", arguments: [false, true])
    func resetsTellAndReleaseEachInstance(existential: Bool) throws {
        // Each evicted instance is released once, and told by its own class (not by the class of the
        // instance evicted before it).
        final class Watch { weak var object: AnyObject? }
        let container = InjectionContainer()
        let disposals = Counter(), builds = Counter()
        if existential {
            container.register((any Connection).self) { () -> any Connection in
                builds.increment()
                return builds.value % 2 == 1 ? PlainConnection() : ClosingConnection(disposals: disposals)
            }
        } else {
            container.register(ClosingConnection.self) { builds.increment(); return ClosingConnection(disposals: disposals) }
        }
        for round in 1...6 {
            let watch = Watch()
            watch.object = existential ? try container.resolve((any Connection).self) : try container.resolve(ClosingConnection.self)
            #expect(watch.object != nil)
            container.reset()
            #expect(watch.object == nil, "round \(round): the evicted instance was not released")
            #expect(disposals.value == (existential ? round / 2 : round), "round \(round)")
        }
        #expect(builds.value == 6)
    }

    @Test("evicted instances are told once, outside the lock, by reset, unregister and re-registration", .isolatedInjection)
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

    @Test("an `any Error` holding a class instance is that instance to the container: held weakly, told and tracked by it")
    func errorExistentialHoldingAClass() throws {
        let container = InjectionContainer()
        let disposals = Counter()
        container.register((any Error).self, lifetime: .weak) { ClassFailure(disposals: disposals) }
        let first = try #require(try container.resolve((any Error).self) as? ClassFailure)
        let second = try container.resolve((any Error).self)  // Held weakly by the class instance, not by the error's box.
        #expect(second as? ClassFailure === first, "a .weak registration shares its instance while it lives")
        let heldAsError = try container.resolve((any Error).self)  // Held as the error, box and all.
        #expect(try container.resolve((any Error).self) as? ClassFailure === first)
        #expect(heldAsError as? ClassFailure === first)

        container.tracksEvictedInstances = true
        container.register((any Error).self) { ClassFailure(disposals: disposals) }
        let scoped = try #require(try container.resolve((any Error).self) as? ClassFailure)
        container.reset()
        #expect(disposals.value == 1, "the evicted instance was told by its own class")
        #expect(container.liveInstancesFromPreviousScopes() == ["Error"], "tracked while the class instance lives (named by its registered type)")
        #expect(scoped.disposals === disposals)  // Held until here.
    }

    @Test("singletons are not disposed by a reset", .isolatedInjection)
    func singletonsSurviveWithoutDisposal() {
        let disposals = Counter()
        InjectionManager.register(Socket.self, lifetime: .singleton) { Socket(disposals: disposals) }
        _ = Inject(Socket.self)
        InjectionManager.resetCurrentContainer()
        #expect(disposals.value == 0)
    }

    @Test("a copy (a test's container) that replaces an instance registration does not dispose the original's instance")
    func copyDoesNotDisposeTheOriginalsInstance() throws {
        let original = InjectionContainer()
        let db = AdvDisposableDB()
        original.register(AdvDisposableDB.self, instance: db)
        #expect(try original.resolve(AdvDisposableDB.self) === db)

        let testContainer = InjectionContainer(copying: original)   // what .isolatedInjection makes
        _ = try testContainer.resolve(AdvDisposableDB.self)
        testContainer.register(AdvDisposableDB.self) { AdvDisposableDB() }   // the test mocks it
        testContainer.removeAll()
        #expect(try original.resolve(AdvDisposableDB.self) === db, "the original still serves it")
        #expect(db.disposeCount == 0, "the original container's live instance was disposed by a copy")
    }

    @Test("after a reset nothing stale is served: scoped, weak, async-built, transaction-registered, copied containers, cached resolves")
    func resetSeesEverything() async throws {
        let container = InjectionContainer()
        let disposals = Counter()
        container.register(SessionScoped.self) { SessionScoped() }
        container.register(WeakThing.self, lifetime: .weak) { WeakThing() }
        container.registerAsync(AsyncThing.self) { () async -> AsyncThing in AsyncThing() }
        container.register(SessionDisposable.self) { SessionDisposable(disposals: disposals) }

        let scoped = try container.resolve(SessionScoped.self)
        _ = try container.resolve(SessionScoped.self)  // Now cached.
        let weak = try container.resolve(WeakThing.self)
        try await container.prepare(AsyncThing.self)
        let asyncBuilt = try container.resolve(AsyncThing.self)
        let disposable = try container.resolve(SessionDisposable.self)
        container.reset()
        #expect(try container.resolve(SessionScoped.self) !== scoped)
        #expect(try container.resolve(WeakThing.self) !== weak)
        #expect(await (try container.resolveAsync(AsyncThing.self)) !== asyncBuilt)
        #expect(try container.resolve(SessionDisposable.self) !== disposable)
        #expect(disposals.value == 1)

        // A transaction that re-registers a resolved type: the old instance is disposed exactly once.
        let beforeTransaction = try container.resolve(SessionDisposable.self)
        container.reset {
            container.register(SessionDisposable.self) { SessionDisposable(disposals: disposals) }
        }
        #expect(disposals.value == 2)
        let afterTransaction = try container.resolve(SessionDisposable.self)
        #expect(afterTransaction !== beforeTransaction)
        container.unregister(SessionDisposable.self)
        #expect(disposals.value == 3)
        container.reset()
        #expect(disposals.value == 3, "an unregistered instance must not be told again by the next reset")

        // A copy evicts its own instances.
        let copy = InjectionContainer(copying: container)
        let inCopy = try copy.resolve(SessionScoped.self)
        _ = try copy.resolve(SessionScoped.self)
        copy.reset()
        #expect(try copy.resolve(SessionScoped.self) !== inCopy)

        // verify() leaves this container's scope alone, and a reset after it still evicts.
        let beforeVerify = try container.resolve(SessionScoped.self)
        try container.verify()
        #expect(try container.resolve(SessionScoped.self) === beforeVerify)
        container.reset()
        #expect(try container.resolve(SessionScoped.self) !== beforeVerify)
    }

    @Test("dispose() runs at most once per instance, and does not deadlock resetting its own container, while threads race resets, unregisters and re-registrations; never for a supplied or .weak instance")
    func disposeRunsExactlyOnce() {
        let container = InjectionContainer()
        let disposals = Counter(), built = Counter()
        let supplied = Counter(), weak = Counter()
        container.register(CountedDisposable.self, instance: CountedDisposable(disposals: supplied))
        enum WeakKey: InjectionKey { typealias Value = CountedDisposable }
        container.register(WeakKey.self, lifetime: .weak) { CountedDisposable(disposals: weak) }
        let factory: @Sendable () -> ResettingDisposable = { [unowned container] in
            built.increment()
            return ResettingDisposable(disposals: disposals, container: container)
        }
        container.register(ResettingDisposable.self, factory: factory)
        let finished = runOnThreads(4) { index in
            for round in 0..<200 {
                let held = try? container.resolve(WeakKey.self)
                _ = try? container.resolve(ResettingDisposable.self)
                _ = try? container.resolve(CountedDisposable.self)
                switch (index + round) % 3 {
                case 0: container.reset()
                case 1: container.unregister(ResettingDisposable.self)
                default: break
                }
                container.register(ResettingDisposable.self, factory: factory)
                withExtendedLifetime(held) {}
            }
        }
        #expect(finished)
        container.removeAll()
        #expect(twiceDisposed.values.isEmpty)
        #expect(disposals.value > 0 && disposals.value <= built.value)  // Builds that lost their scope are never cached.
        #expect(supplied.value == 0)
        #expect(weak.value == 0)
    }

    // MARK: Each instance told by its own class

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
            container.reset()
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
            case 0: container.reset()
            case 1:
                container.unregister(ErrorKey.self)
                container.register(ErrorKey.self) { DisposableFailure(disposals) }
                if optional != nil { container.reset() }
            default:
                container.register(OptionalDisposableKey.self) {
                    let next = serial.increment() - 1
                    return next % 3 == 2 ? nil : (next % 3 == 0 ? DisposableSub(disposals) : DisposableBase(disposals))
                }
                container.reset()
            }
            #expect(disposals.value == expected, "round \(round)")
            if disposals.value != expected { return }
        }
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
                if thread == 0 { container.reset() } else { _ = try? container.resolve(AlternatingKey.self) }
            }
        }
        #expect(finished)
        container.reset()
        let told = made.values.compactMap { $0 as? Told }
        #expect(told.allSatisfy { $0.times.value <= 1 }, "an instance was told more than once")
        #expect(disposals.value == told.reduce(0) { $0 + $1.times.value })
    }

    // MARK: Many keys

    /// Many scoped keys cached, a third of them replaced before each reset (in an order that changes from
    /// round to round), some failing their first `postConstruction`: every cached instance is told once (at
    /// its replacement or at the reset), a failed one never, and a reset after it leaves nothing behind.
    @Test("many keys, some replaced and some failing postConstruction between resets: every cached instance is told exactly once")
    func everyInstanceOfManyKeysToldOnce() throws {
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
            // Replace a third of the keys, a different third each round.
            for depth in stride(from: round % 3, to: keys, by: 3).reversed() {
                withChurnKey(Int.self, depth: depth, Register(container: container, disposals: disposals, failing: false))
            }
            container.reset()
            expected += keys
            #expect(disposals.value == expected, "round \(round): \(disposals.value) disposals, not \(expected)")
            if disposals.value != expected { return }
        }
        container.reset()
        #expect(disposals.value == expected, "a reset after an empty scope told someone")
    }
}
