import Foundation
import Injection
import InjectionTesting
import Testing

// What a reset, an unregister or a re-registration evicts, and who is told: every evicted instance is
// told once (`dispose()`), outside the lock, so it may use the container; singletons are kept, and a
// supplied instance stays its owner's.

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
private final class PinScoped: Sendable {}
private final class WeakThing: Sendable {}
private final class AsyncThing: Sendable {}
private final class PinDisposable: InjectionDisposable, @unchecked Sendable {
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
        container.resetCurrentContainer()
        container.register(DisposeMarker.self) { DisposeMarker() }
        _ = try? container.resolve(DisposeMarker.self)
    }
}

/// A class per pair of types: `Paired<A, B>` and `KeptPaired<A, B>` make thousands of classes at run time.
private final class Paired<A, B>: Connection, InjectionDisposable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}
private final class KeptPaired<A, B>: Connection {}

/// `Paired<A, B>` (disposable) or `KeptPaired<A, B>`, made with `disposals`, for the types `a` and `b`.
private func pairedMaker(_ a: Any.Type, _ b: Any.Type, disposable: Bool, disposals: Counter) -> @Sendable () -> any Connection {
    func first<A>(_: A.Type) -> @Sendable () -> any Connection {
        func second<B>(_: B.Type) -> @Sendable () -> any Connection {
            if disposable { return { Paired<A, B>(disposals: disposals) } }
            return { KeptPaired<A, B>() }
        }
        return _openExistential(b, do: second)
    }
    return _openExistential(a, do: first)
}

@Suite("Eviction and disposal")
struct EvictionTests {
    @Test("each evicted instance is told by its own class among thousands of classes, whose remembered answers displace one another")
    func disposalAnswersForThousandsOfClasses() throws {
        // Whether a class is disposable is remembered per class, process-wide, in a table of 8,192 words:
        // fewer than the classes asked about here, so answers displace one another. A displaced answer is
        // asked again, never taken from another class.
        var types: [Any.Type] = [Int.self, String.self, Double.self, Bool.self, Int8.self, Int16.self, Int32.self, Int64.self]
        types += [UInt.self, UInt8.self, UInt16.self, UInt32.self, UInt64.self, Float.self, Character.self, Unicode.Scalar.self] as [Any.Type]
        types += [[Int].self, [String].self, Set<Int>.self, [Int: Int].self, Int?.self, String?.self, Substring.self, Void.self] as [Any.Type]
        types += [[Bool].self, Bool?.self, Double?.self, [Double].self, [UInt8].self, UInt8?.self, [Float].self, Float?.self] as [Any.Type]
        for index in 0..<64 { types.append(type(of: pairedMaker(types[index % 32], types[index / 2], disposable: false, disposals: Counter())())) }
        let disposals = Counter()
        var makers: [@Sendable () -> any Connection] = []
        for a in types {
            for b in types { makers.append(pairedMaker(a, b, disposable: makers.count % 3 != 0, disposals: disposals)) }
        }
        #expect(makers.count == 9_216)
        let allMakers = makers, next = Counter()
        let container = InjectionContainer()
        container.register((any Connection).self) { allMakers[(next.increment() - 1) % allMakers.count]() }
        var expected = 0
        for round in 0..<(3 * makers.count) {
            let connection = try container.resolve((any Connection).self)
            if connection is any InjectionDisposable { expected += 1 }
            container.resetCurrentContainer()
            guard disposals.value == expected else {
                Issue.record("instance \(round), a \(type(of: connection)): told \(disposals.value) times in all, not \(expected)")
                break
            }
        }
        #expect(expected == 3 * 6_144)
    }

    @Test("an optional registration's disposable instance is told even after a non-disposable one of the same registration")
    func optionalInstancesAreToldByTheirOwnType() throws {
        // Whether to call dispose() is remembered per dynamic type; an Optional's own type is the same
        // whichever class it wraps, so the answer must be asked of the wrapped instance.
        let container = InjectionContainer()
        let disposals = Counter()
        let builds = Counter()
        container.register((any Connection)?.self) { () -> (any Connection)? in
            builds.increment()
            return builds.value % 2 == 1 ? PlainConnection() : ClosingConnection(disposals: disposals)
        }
        #expect(try container.resolve((any Connection)?.self) is PlainConnection)
        container.resetCurrentContainer()
        #expect(try container.resolve((any Connection)?.self) is ClosingConnection)
        container.resetCurrentContainer()
        #expect(disposals.value == 1)
    }

    @Test("every reset tells and releases each instance by its own class: a class, and a class existential whose class alternates", arguments: [false, true])
    func resetsTellAndReleaseEachInstance(existential: Bool) throws {
        // From the second eviction on, a registration whose cached value is a class instance or a class
        // existential moves the object out of its slot without a copy: it must still be released once,
        // and told by its own class (not by the class of the instance evicted before it).
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
            container.resetCurrentContainer()
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
        container.resetCurrentContainer()
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

    @Test("after a reset nothing stale is served: scoped, weak, async-built, transaction-registered, copied containers, thread caches")
    func resetSeesEverything() async throws {
        let container = InjectionContainer()
        let disposals = Counter()
        container.register(PinScoped.self) { PinScoped() }
        container.register(WeakThing.self, lifetime: .weak) { WeakThing() }
        container.register(AsyncThing.self) { () async -> AsyncThing in AsyncThing() }
        container.register(PinDisposable.self) { PinDisposable(disposals: disposals) }

        let scoped = try container.resolve(PinScoped.self)
        _ = try container.resolve(PinScoped.self)  // Now in this thread's cache too.
        let weak = try container.resolve(WeakThing.self)
        try await container.prepare(AsyncThing.self)
        let asyncBuilt = try container.resolve(AsyncThing.self)
        let disposable = try container.resolve(PinDisposable.self)
        container.resetCurrentContainer()
        #expect(try container.resolve(PinScoped.self) !== scoped)
        #expect(try container.resolve(WeakThing.self) !== weak)
        #expect(await (try container.resolveAsync(AsyncThing.self)) !== asyncBuilt)
        #expect(try container.resolve(PinDisposable.self) !== disposable)
        #expect(disposals.value == 1)

        // A transaction that re-registers a resolved type: the old instance is disposed exactly once.
        let beforeTransaction = try container.resolve(PinDisposable.self)
        container.resetCurrentContainer {
            container.register(PinDisposable.self) { PinDisposable(disposals: disposals) }
        }
        #expect(disposals.value == 2)
        let afterTransaction = try container.resolve(PinDisposable.self)
        #expect(afterTransaction !== beforeTransaction)
        container.unregister(PinDisposable.self)
        #expect(disposals.value == 3)
        container.resetCurrentContainer()
        #expect(disposals.value == 3, "a removed slot still listed must not be disposed again")

        // A copy lists its own slots.
        let copy = InjectionContainer(copying: container)
        let inCopy = try copy.resolve(PinScoped.self)
        _ = try copy.resolve(PinScoped.self)
        copy.resetCurrentContainer()
        #expect(try copy.resolve(PinScoped.self) !== inCopy)

        // verify() leaves this container's scope alone, and a reset after it still evicts.
        let beforeVerify = try container.resolve(PinScoped.self)
        try container.verify()
        #expect(try container.resolve(PinScoped.self) === beforeVerify)
        container.resetCurrentContainer()
        #expect(try container.resolve(PinScoped.self) !== beforeVerify)
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
                case 0: container.resetCurrentContainer()
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
}
