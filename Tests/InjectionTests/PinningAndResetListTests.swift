import Foundation
import Testing
@_spi(Testing) import Injection
import InjectionTesting

// The pinned transient fast path, the per-thread cache lock and the list of slots a reset visits
// (`scopedSlots`), written as a review of those changes.

private final class Captured: Sendable {}
private final class Scoped: Sendable {
    let captured: Captured
    init(captured: Captured) { self.captured = captured }
}

@Suite("Pinning and the reset list")
struct PinningAndResetListTests {
    @Test("unregistering a scoped type that was resolved releases its registration (and what its factory captured) without a reset")
    func unregisterReleasesRegistration() throws {
        let container = InjectionContainer()
        weak var weakCaptured: Captured?
        do {
            let captured = Captured()
            weakCaptured = captured
            container.register(Scoped.self) { [captured] in Scoped(captured: captured) }
        }
        _ = try container.resolve(Scoped.self)  // Lists the slot in `scopedSlots`.
        container.unregister(Scoped.self)
        #expect(!container.isRegistered(Scoped.self))
        #expect(weakCaptured == nil, "the removed registration is still retained (by scopedSlots) until the next reset")
        container.resetCurrentContainer()
        #expect(weakCaptured == nil)
    }

    @Test("re-registering a resolved scoped type again and again does not grow the container without a reset")
    func reRegistrationDoesNotAccumulate() throws {
        let container = InjectionContainer()
        for index in 0..<1_000 {
            container.register(Scoped.self) { Scoped(captured: Captured()) }
            _ = try container.resolve(Scoped.self)
            _ = index
        }
        let listed = InjectionProbe.resettableCount(in: container)
        #expect(listed <= 1, "scopedSlots holds \(listed) slots for one registration")
    }
}

// MARK: - Pinned registrations

private final class PinOuter: Sendable {}
private final class PinInner: Sendable {}
private final class PinOther: Sendable {}
private final class PinMissing: Sendable {}
private final class PinDisposable: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}
private struct PinBroken: Error {}

/// Weak references and switches shared with factories (which must not capture their container).
private final class Probe: @unchecked Sendable {
    private let lock = NSLock()
    private var _mode = 0
    var mode: Int { get { lock.withLock { _mode } } set { lock.withLock { _mode = newValue } } }
    weak var registration: AnyObject?
    var aliveDuringFactory: [Bool] = []
}

private func isServedFromThreadCache(_ type: Any.Type, of container: InjectionContainer) -> Bool {
    InjectionProbe.threadCacheEntry(for: type, in: container) == .factory
}

private func registration(of type: Any.Type, in container: InjectionContainer) -> AnyObject? {
    InjectionProbe.registration(for: type, in: container)
}

extension PinningAndResetListTests {
    @Test("an inner cached transient re-registers the outer one: the outer registration stays alive until the outer returns, then is freed")
    func innerReplacesOuter() throws {
        let container = InjectionContainer()
        let probe = Probe()
        container.register(PinOuter.self, lifetime: .transient) {
            _ = try InjectionManager.resolve(PinInner.self)
            if probe.mode == 1 { probe.aliveDuringFactory.append(probe.registration != nil) }
            return PinOuter()
        }
        container.register(PinInner.self, lifetime: .transient) {
            if probe.mode == 1 {
                InjectionManager.register(PinOuter.self, lifetime: .transient) { PinOuter() }
                InjectionManager.unregister(PinInner.self)
            }
            return PinInner()
        }
        for _ in 0..<4 { _ = try container.resolve(PinOuter.self) }
        #expect(isServedFromThreadCache(PinOuter.self, of: container))
        #expect(isServedFromThreadCache(PinInner.self, of: container))
        probe.registration = registration(of: PinOuter.self, in: container)
        probe.mode = 1
        _ = try container.resolve(PinOuter.self)
        #expect(probe.aliveDuringFactory == [true])
        #expect(probe.registration == nil)
        probe.mode = 0
        _ = try container.resolve(PinOuter.self)
    }

    @Test("a cached transient lets another container with cached transients deinit: its registrations are freed when the transient returns")
    func otherContainerDeinitsWhilePinned() throws {
        let container = InjectionContainer()
        let probe = Probe()
        container.register(PinOuter.self, lifetime: .transient) {
            if probe.mode == 1 {
                let other = InjectionContainer()
                other.register(PinOther.self, lifetime: .transient) { PinOther() }
                for _ in 0..<4 { _ = try other.resolve(PinOther.self) }
                probe.registration = registration(of: PinOther.self, in: other)
                // `other` deinits here, evicting its pinned registration from this thread's cache.
            }
            if probe.mode == 1 { probe.aliveDuringFactory.append(probe.registration != nil) }
            // A new container may reuse the address: nothing of the old one may be served.
            let reuse = InjectionContainer()
            #expect(throws: InjectionError.self) { try reuse.resolve(PinOther.self) }
            return PinOuter()
        }
        for _ in 0..<4 { _ = try container.resolve(PinOuter.self) }
        #expect(isServedFromThreadCache(PinOuter.self, of: container))
        probe.mode = 1
        _ = try container.resolve(PinOuter.self)
        #expect(probe.aliveDuringFactory == [true])
        #expect(probe.registration == nil)
    }

    @Test("a cached transient unregisters itself and throws: registration freed after the throw, next resolve fails cleanly")
    func unregistersItselfThenThrows() throws {
        let container = InjectionContainer()
        let probe = Probe()
        container.register(PinOuter.self, lifetime: .transient) {
            if probe.mode == 1 {
                InjectionManager.unregister(PinOuter.self)
                probe.aliveDuringFactory.append(probe.registration != nil)
                throw PinBroken()
            }
            return PinOuter()
        }
        for _ in 0..<4 { _ = try container.resolve(PinOuter.self) }
        probe.registration = registration(of: PinOuter.self, in: container)
        probe.mode = 1
        let error = #expect(throws: InjectionError.self) { try container.resolve(PinOuter.self) }
        #expect(error?.kind == .factoryFailed)
        #expect(probe.aliveDuringFactory == [true])
        #expect(probe.registration == nil)
        let second = #expect(throws: InjectionError.self) { try container.resolve(PinOuter.self) }
        #expect(second?.kind == .notRegistered)
    }

    @Test("a cached transient resets its container, then re-resolves itself through another transient: no stale or double state")
    func resetInsidePinnedThenResolve() throws {
        let container = InjectionContainer()
        let probe = Probe()
        let disposals = Counter()
        container.register(PinDisposable.self) { PinDisposable(disposals: disposals) }
        container.register(PinOuter.self, lifetime: .transient) {
            let before: PinDisposable = try InjectionManager.resolve()
            if probe.mode == 1 {
                InjectionManager.resetCurrentContainer()
                InjectionManager.unregister(PinDisposable.self)
                InjectionManager.register(PinDisposable.self) { PinDisposable(disposals: disposals) }
                let after: PinDisposable = try InjectionManager.resolve()
                #expect(before !== after)
            }
            return PinOuter()
        }
        for _ in 0..<4 { _ = try container.resolve(PinOuter.self) }
        let first: PinDisposable = try container.resolve()
        probe.mode = 1
        _ = try container.resolve(PinOuter.self)
        #expect(disposals.value == 1)
        let next: PinDisposable = try container.resolve()
        #expect(next !== first)
        container.resetCurrentContainer()
        #expect(disposals.value == 2)  // The instance built inside the factory is not cached (old scope)...
        // ...but the one resolved after is, and only it is disposed: exactly one more.
    }

    @Test("verify() parks a worker that runs a cached transient after evicting registrations: nothing leaks, verify returns")
    func verifyParksPinnedWorker() throws {
        let container = InjectionContainer()
        let runs = Counter()
        container.register(PinInner.self, lifetime: .transient) {
            if runs.increment() == 4 {
                InjectionManager.register(PinOther.self, lifetime: .transient) { PinOther() }
                _ = Inject(PinMissing.self)
            }
            return PinInner()
        }
        container.register(PinOther.self, lifetime: .transient) { PinOther() }
        container.register(PinOuter.self) {
            for _ in 0..<4 { _ = Inject(PinOther.self); _ = Inject(PinInner.self) }
            return PinOuter()
        }
        let error = #expect(throws: InjectionError.self) { try container.verify() }
        #expect(error?.problems.count == 1)
    }
}

// MARK: - Threads

private final class PinScoped: Sendable {}

extension PinningAndResetListTests {
    @Test("threads resolving cached transients that re-register, unregister and reset while others do the same")
    func pinnedStress() throws {
        let container = InjectionContainer()
        let probe = Probe()
        container.register(PinScoped.self) { PinScoped() }
        container.register(PinInner.self, lifetime: .transient) { _ = try InjectionManager.resolve(PinScoped.self); return PinInner() }
        container.register(PinOuter.self, lifetime: .transient) {
            _ = try InjectionManager.resolve(PinInner.self)
            switch Int.random(in: 0..<40) {
            case 0: InjectionManager.register(PinInner.self, lifetime: .transient) { PinInner() }
            case 1: InjectionManager.resetCurrentContainer()
            case 2: InjectionManager.register(PinOuter.self, lifetime: .transient) { PinOuter() }
            default: break
            }
            _ = probe
            return PinOuter()
        }
        // The bound only tells a deadlock from slowness: this takes ~4 s in a debug build and over 30 s under
        // AddressSanitizer (CI's leak check), where the default 30 s bound failed it while it was still running.
        let finished = runOnThreads(2, timeout: 300) { index in
            for round in 0..<20_000 {
                _ = try? container.resolve(PinOuter.self)
                if index == 1 && round % 500 == 0 {
                    container.register(PinOuter.self, lifetime: .transient) {
                        _ = try InjectionManager.resolve(PinInner.self)
                        if Int.random(in: 0..<40) == 0 { InjectionManager.unregister(PinInner.self) }
                        return PinOuter()
                    }
                    container.register(PinInner.self, lifetime: .transient) { PinInner() }
                }
            }
        }
        #expect(finished)
    }
}

// MARK: - scopedSlots: what a reset must still see

private final class WeakThing: Sendable {}
private final class AsyncThing: Sendable {}

extension PinningAndResetListTests {
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

    @Test("a thread that exits frees what its cache held (registrations and instance copies)")
    func threadExitFreesCache() throws {
        let container = InjectionContainer()
        weak var weakCaptured: Captured?
        do {
            let captured = Captured()
            weakCaptured = captured
            container.register(PinOuter.self, lifetime: .transient) { [captured] in _ = captured; return PinOuter() }
        }
        let done = Gate()
        onThread {
            for _ in 0..<5 { _ = try? container.resolve(PinOuter.self) }
            done.open()
        }
        #expect(done.wait())
        Thread.sleep(forTimeInterval: 0.2)
        container.register(PinOuter.self, lifetime: .transient) { PinOuter() }  // Drops the container's reference.
        #expect(weakCaptured == nil)
    }
}
