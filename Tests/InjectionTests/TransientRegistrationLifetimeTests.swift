import Foundation
@_spi(Testing) import InjectionTesting
import InjectionTesting
import Testing

// A transient keeps its registration alive while its factory runs, even if the factory (or another thread)
// unregisters, replaces or resets it meanwhile, and releases it once the resolve returns. What the factory
// resolves meanwhile sees every change made before it, on any thread.

private final class Token: Sendable {}
private final class Slow: Sendable {
    let token: Token
    init(token: Token) { self.token = token }
}

private final class RunOuter: Sendable {}
private final class RunInner: Sendable {}
private final class RunOther: Sendable {}
private final class RunMissing: Sendable {}
private final class RunDisposable: InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    func dispose() { disposals.increment() }
}
private struct RunBroken: Error {}

/// Weak references and switches shared with factories (which must not capture their container).
private final class Probe: @unchecked Sendable {
    private let lock = NSLock()
    private var _mode = 0
    var mode: Int { get { lock.withLock { _mode } } set { lock.withLock { _mode = newValue } } }
    weak var registration: AnyObject?
    var aliveDuringFactory: [Bool] = []
}

private func registration(of type: Any.Type, in container: InjectionContainer) -> AnyObject? {
    InjectionProbe.registration(for: type, in: container)
}

private final class RunScoped: Sendable {}

@Suite("A transient's registration while its factory runs")
struct TransientRegistrationLifetimeTests {
    @Test("a transient unregistered while its factory runs stays alive until that resolve returns, then is released", .isolatedInjection)
    func registrationOutlivesEviction() throws {
        let container = InjectionContainer()
        let started = Gate(), proceed = Gate(), done = Gate()
        weak var weakToken: Token?
        do {
            let token = Token()
            weakToken = token
            let blocks = Counter()
            container.register(Slow.self, lifetime: .transient) { [token] in
                // Block only in the fourth run, one with its edges recorded.
                if blocks.increment() == 4 {
                    started.open()
                    proceed.wait()
                }
                return Slow(token: token)
            }
        }
        let outcome = Collector<Bool>()
        onThread {
            for _ in 0..<3 { _ = try? container.resolve(Slow.self) }
            outcome.append((try? container.resolve(Slow.self)) != nil)  // Holds no `Slow` past this line.
            done.open()
        }
        #expect(started.wait())
        weak let weakRegistration = InjectionProbe.registration(for: Slow.self, in: container)
        #expect(weakRegistration != nil)
        container.unregister(Slow.self)  // The container lets go of the registration.
        #expect(weakRegistration != nil, "the running factory's registration must stay alive")
        proceed.open()
        #expect(done.wait())
        #expect(outcome.values == [true])
        #expect(weakRegistration == nil, "once the outermost transient returns, the evicted registration is released")
        #expect(weakToken == nil)
    }

    @Test("an inner transient re-registers the outer one: the outer registration stays alive until the outer returns, then is freed")
    func innerReplacesOuter() throws {
        let container = InjectionContainer()
        let probe = Probe()
        container.register(RunOuter.self, lifetime: .transient) {
            _ = try InjectionManager.resolve(RunInner.self)
            if probe.mode == 1 { probe.aliveDuringFactory.append(probe.registration != nil) }
            return RunOuter()
        }
        container.register(RunInner.self, lifetime: .transient) {
            if probe.mode == 1 {
                InjectionManager.register(RunOuter.self, lifetime: .transient) { RunOuter() }
                InjectionManager.unregister(RunInner.self)
            }
            return RunInner()
        }
        for _ in 0..<4 { _ = try container.resolve(RunOuter.self) }
        probe.registration = registration(of: RunOuter.self, in: container)
        probe.mode = 1
        _ = try container.resolve(RunOuter.self)
        #expect(probe.aliveDuringFactory == [true])
        #expect(probe.registration == nil)
        probe.mode = 0
        _ = try container.resolve(RunOuter.self)
    }

    @Test("a transient releases another container with transients: nothing of it is served at its address, and its registrations are freed by the time the transient returns")
    func otherContainerDeinitsInsideCachedTransient() throws {
        let container = InjectionContainer()
        let probe = Probe()
        container.register(RunOuter.self, lifetime: .transient) {
            if probe.mode == 1 {
                let other = InjectionContainer()
                other.register(RunOther.self, lifetime: .transient) { RunOther() }
                for _ in 0..<4 { _ = try other.resolve(RunOther.self) }
                probe.registration = registration(of: RunOther.self, in: other)
                // `other` deinits here: its registrations go.
            }
            // A new container may reuse the address: nothing of the old one may be served.
            let reuse = InjectionContainer()
            #expect(throws: InjectionError.self) { try reuse.resolve(RunOther.self) }
            return RunOuter()
        }
        for _ in 0..<4 { _ = try container.resolve(RunOuter.self) }
        probe.mode = 1
        _ = try container.resolve(RunOuter.self)
        #expect(probe.registration == nil)
    }

    @Test("a transient unregisters itself and throws: registration freed after the throw, next resolve fails cleanly")
    func unregistersItselfThenThrows() throws {
        let container = InjectionContainer()
        let probe = Probe()
        container.register(RunOuter.self, lifetime: .transient) {
            if probe.mode == 1 {
                InjectionManager.unregister(RunOuter.self)
                probe.aliveDuringFactory.append(probe.registration != nil)
                throw RunBroken()
            }
            return RunOuter()
        }
        for _ in 0..<4 { _ = try container.resolve(RunOuter.self) }
        probe.registration = registration(of: RunOuter.self, in: container)
        probe.mode = 1
        let error = #expect(throws: InjectionError.self) { try container.resolve(RunOuter.self) }
        #expect(error?.kind == .factoryFailed)
        #expect(probe.aliveDuringFactory == [true])
        #expect(probe.registration == nil)
        let second = #expect(throws: InjectionError.self) { try container.resolve(RunOuter.self) }
        #expect(second?.kind == .notRegistered)
    }

    @Test("a transient resets its container, then re-resolves itself through another transient: no stale or double state")
    func resetInsideThenResolve() throws {
        let container = InjectionContainer()
        let probe = Probe()
        let disposals = Counter()
        container.register(RunDisposable.self) { RunDisposable(disposals: disposals) }
        container.register(RunOuter.self, lifetime: .transient) {
            let before: RunDisposable = try InjectionManager.resolve()
            if probe.mode == 1 {
                InjectionManager.resetCurrentContainer()
                InjectionManager.unregister(RunDisposable.self)
                InjectionManager.register(RunDisposable.self) { RunDisposable(disposals: disposals) }
                let after: RunDisposable = try InjectionManager.resolve()
                #expect(before !== after)
            }
            return RunOuter()
        }
        for _ in 0..<4 { _ = try container.resolve(RunOuter.self) }
        let first: RunDisposable = try container.resolve()
        probe.mode = 1
        _ = try container.resolve(RunOuter.self)
        #expect(disposals.value == 1)
        let next: RunDisposable = try container.resolve()
        #expect(next !== first)
        container.reset()
        #expect(disposals.value == 2)  // The instance built inside the factory is not cached (old scope)...
        // ...but the one resolved after is, and only it is disposed: exactly one more.
    }

    @Test("verify() parks a worker that runs a transient after evicting registrations: nothing leaks, verify returns")
    func verifyParksWorkerInCachedTransient() throws {
        let container = InjectionContainer()
        let runs = Counter()
        container.register(RunInner.self, lifetime: .transient) {
            if runs.increment() == 4 {
                InjectionManager.register(RunOther.self, lifetime: .transient) { RunOther() }
                _ = Inject(RunMissing.self)
            }
            return RunInner()
        }
        container.register(RunOther.self, lifetime: .transient) { RunOther() }
        container.register(RunOuter.self) {
            for _ in 0..<4 { _ = Inject(RunOther.self); _ = Inject(RunInner.self) }
            return RunOuter()
        }
        let error = #expect(throws: InjectionError.self) { try container.verify() }
        #expect(error?.problems.count == 1)
    }

    @Test("threads resolving transients that re-register, unregister and reset while others do the same")
    func cachedTransientStress() throws {
        let container = InjectionContainer()
        let probe = Probe()
        container.register(RunScoped.self) { RunScoped() }
        container.register(RunInner.self, lifetime: .transient) { _ = try InjectionManager.resolve(RunScoped.self); return RunInner() }
        container.register(RunOuter.self, lifetime: .transient) {
            _ = try InjectionManager.resolve(RunInner.self)
            switch Int.random(in: 0..<40) {
            case 0: InjectionManager.register(RunInner.self, lifetime: .transient) { RunInner() }
            case 1: InjectionManager.resetCurrentContainer()
            case 2: InjectionManager.register(RunOuter.self, lifetime: .transient) { RunOuter() }
            default: break
            }
            _ = probe
            return RunOuter()
        }
        // The bound only tells a deadlock from slowness: this takes ~4 s in a debug build, over 30 s under
        // AddressSanitizer (CI's leak check), and Swift Testing reports 93 s for it under ThreadSanitizer in a full
        // parallel run (4 s alone).
        let resolved = Counter(), failures = Collector<InjectionError.Kind>()
        let finished = runOnThreads(2, timeout: 600) { index in
            for round in 0..<20_000 {
                do throws(InjectionError) {
                    _ = try container.resolve(RunOuter.self)
                    resolved.increment()
                } catch {
                    failures.append(error.kind)
                }
                if index == 1 && round % 500 == 0 {
                    container.register(RunOuter.self, lifetime: .transient) {
                        _ = try InjectionManager.resolve(RunInner.self)
                        if Int.random(in: 0..<40) == 0 { InjectionManager.unregister(RunInner.self) }
                        return RunOuter()
                    }
                    container.register(RunInner.self, lifetime: .transient) { RunInner() }
                }
            }
        }
        #expect(finished)
        // The only failure a serial order could give: RunInner unregistered by a factory, until the next
        // re-registration. Never a cycle, a wrong type or a stale registration's error.
        #expect(Set(failures.values).isSubset(of: [.notRegistered]), "\(Set(failures.values))")
        #expect(resolved.value + failures.values.count == 40_000)
        #expect(resolved.value > 0)  // RunInner stays unregistered from a factory's unregister to the next round of 500.
    }

    // A transient resolved inside a transient's factory: every change made before its resolve shows.

    @Test("a transient inside a transient's factory: a re-registration, an unregistration and a reset made before the next resolve, on this thread or another, all show")
    func nestedTransientSeesEveryChangeMadeBeforeIt() throws {
        let container = InjectionContainer()
        let generation = Counter()
        container.register(NestedOuter.self, lifetime: .transient) { NestedOuter(inner: try InjectionManager.resolve(NestedInner.self)) }
        container.register(NestedInner.self, lifetime: .transient) { NestedInner(generation: 0) }
        for _ in 0..<3 { #expect(try container.resolve(NestedOuter.self).inner.generation == 0) }

        container.register(NestedInner.self, lifetime: .transient) { NestedInner(generation: 1) }  // This thread.
        #expect(try container.resolve(NestedOuter.self).inner.generation == 1)
        #expect(try container.resolve(NestedOuter.self).inner.generation == 1)

        let registered = Gate()
        onThread {  // Another thread; the gate orders it before the next resolve.
            container.register(NestedInner.self, lifetime: .transient) { NestedInner(generation: 2 + generation.increment()) }
            registered.open()
        }
        #expect(registered.wait())
        #expect(try container.resolve(NestedOuter.self).inner.generation == 3)
        #expect(try container.resolve(NestedOuter.self).inner.generation == 4, "a transient runs its factory every time")

        let unregistered = Gate()
        onThread {
            container.unregister(NestedInner.self)
            unregistered.open()
        }
        #expect(unregistered.wait())
        #expect(throws: InjectionError.self) { try container.resolve(NestedOuter.self) }

        container.register(NestedInner.self) { NestedInner(generation: 10 + generation.increment()) }  // Scoped now.
        let scoped = try container.resolve(NestedOuter.self).inner
        #expect(try container.resolve(NestedOuter.self).inner === scoped)
        container.reset()
        #expect(try container.resolve(NestedOuter.self).inner !== scoped, "a reset shows inside a transient")
    }

    @Test("transients inside a transient's factory racing re-registrations, unregistrations and another container's release on other threads")
    func nestedTransientsRacingChanges() {
        let container = InjectionContainer()
        let valid = Counter(), invalid = Counter()
        container.register(NestedOuter.self, lifetime: .transient) { NestedOuter(inner: try InjectionManager.resolve(NestedInner.self)) }
        container.register(NestedInner.self, lifetime: .transient) { NestedInner(generation: 0) }
        let finished = runOnThreads(3, timeout: 300) { index in
            for round in 0..<5_000 {
                switch index {
                case 0, 1:
                    if let outer = try? container.resolve(NestedOuter.self) {
                        // Every registration ever made returns 0..<3, or 10 + something for the scoped one.
                        (outer.inner.generation < 3 ? valid : invalid).increment()
                    }
                default:
                    switch round % 4 {
                    case 0: container.register(NestedInner.self, lifetime: .transient) { NestedInner(generation: 1) }
                    case 1: container.unregister(NestedInner.self)
                    case 2:
                        // A container that ran a transient, released.
                        let other = InjectionContainer()
                        other.register(NestedInner.self, lifetime: .transient) { NestedInner(generation: 99) }
                        _ = try? other.resolve(NestedInner.self)
                    default: container.register(NestedInner.self, lifetime: .transient) { NestedInner(generation: 2) }
                    }
                }
            }
        }
        #expect(finished)
        #expect(invalid.value == 0)
        #expect(valid.value > 0)
    }

    /// A transient's factory resolves ~100 scoped keys of a fresh container, with a transient resolved
    /// again between each; other threads meanwhile re-register, unregister and resolve those keys, re-register both
    /// transients and reset. Every instance is of the key asked for, and once the containers are gone every
    /// instance and registration was released exactly once.
    @Test("a transient's factory resolves a hundred keys while other threads evict, reset and re-register: each gets its key's instance, each object released once")
    func resolvesInsideCachedTransientUnderChurn() throws {
        let keyCount = 100
        let live = LiveTokens(), registrations = LiveTokens(), wrong = LiveTokens()
        let mismatches = Collector<String>()
        let nestedResolves = Counter(), churn = Counter()
        for round in 0..<6 {
            let slot = ContainerSlot(InjectionContainer())
            let container = slot.value!
            let keys = Array(stKeys[(round * 7)..<(round * 7 + keyCount)])
            for (i, key) in keys.enumerated() {
                stRegister(key, index: round * 7 + i, serial: 0, in: container, lifetime: .scoped, live: live, registrations: registrations)
            }
            let phase = AtomicWord(0)  // 1: the outer factory resolves every key.
            let innerRuns = Counter()
            @Sendable func registerInner(_ serial: Int) {
                let token = CountedToken(-1, serial: serial, live: registrations)
                container.register(NestedRunInner.self, lifetime: .transient) { _ = token; innerRuns.increment(); return NestedRunInner() }
            }
            @Sendable func registerOuter(_ serial: Int) {
                let token = CountedToken(-2, serial: serial, live: registrations)
                container.register(NestedRunOuter.self, lifetime: .transient) { [unowned container] in
                    _ = token
                    guard phase.value == 1 else { return NestedRunOuter() }
                    for (i, key) in keys.enumerated() {
                        nestedResolves.increment()
                        if let resolved = try? stResolve(key, in: container), resolved.token.index != round * 7 + i {
                            wrong.didMake()
                            mismatches.append("round \(round): key \(i) resolved an instance of key \(resolved.token.index)")
                        }
                        _ = try? container.resolve(NestedRunInner.self)
                    }
                    return NestedRunOuter()
                }
            }
            registerInner(0)
            registerOuter(0)
            for _ in 0..<3 { _ = try container.resolve(NestedRunOuter.self) }  // Its edges are recorded from now on.
            let start = Barrier(count: 3)
            let done = Counter()
            let finished = runOnThreads(3) { thread in
                var random = SeededRandom(seed: UInt64(round * 10 + thread))
                start.arrive()
                if thread == 0 {
                    // A fresh thread.
                    for _ in 0..<3 { _ = try? container.resolve(NestedRunOuter.self) }
                    phase.value = 1
                    for _ in 0..<4 { _ = try? container.resolve(NestedRunOuter.self) }
                    done.increment()
                } else {
                    var serial = thread * 100_000
                    while done.value == 0 {
                        serial += 1
                        churn.increment()
                        let i = Int.random(in: 0..<keyCount, using: &random)
                        switch Int.random(in: 0..<20, using: &random) {
                        case 0..<6:
                            stRegister(keys[i], index: round * 7 + i, serial: serial, in: container, lifetime: .scoped, live: live,
                                       registrations: registrations)
                        case 6..<8:
                            stUnregister(keys[i], in: container)
                            stRegister(keys[i], index: round * 7 + i, serial: serial, in: container, lifetime: .scoped, live: live,
                                       registrations: registrations)
                        case 8..<14:
                            if let resolved = try? stResolve(keys[i], in: container), resolved.token.index != round * 7 + i {
                                wrong.didMake()
                            }
                        case 14..<16: registerInner(serial)
                        case 16..<17: registerOuter(serial)
                        default: container.reset()
                        }
                    }
                }
            }
            #expect(finished)
            #expect(innerRuns.value >= keyCount)
            // The last reference: the container's deinit releases what it holds.
            _ = slot.take()
        }
        print("resolvesInsideCachedTransientUnderChurn: \(nestedResolves.value) resolves inside transients, \(churn.value) changes by other threads")
        #expect(wrong.madeCount == 0, "\(mismatches.values.prefix(5))")
        // The containers are gone.
        #expect(waitUntil { live.alive == 0 && registrations.alive == 0 },
                "\(live.alive) instances, \(registrations.alive) registrations still alive")
    }
}

private final class NestedInner: Sendable {
    let generation: Int
    init(generation: Int) { self.generation = generation }
}
private final class NestedOuter: Sendable {
    let inner: NestedInner
    init(inner: NestedInner) { self.inner = inner }
}
private final class NestedRunOuter: Sendable { init() {} }
private final class NestedRunInner: Sendable { init() {} }
