import Foundation
@_spi(Testing) import InjectionTesting
import InjectionTesting
import Testing

// A cycle across threads is reported as a cycle, never a deadlock. And a cycle is reported only when the
// chain of resolutions waiting for one another really closes at that moment: never on an acyclic graph,
// whichever order threads (or the child tasks of an async factory) build and wait in.

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false
    func set() { lock.withLock { isSet = true } }
    func clear() { lock.withLock { isSet = false } }
    var value: Bool { lock.withLock { isSet } }
    /// Spins until the flag is set (the other thread is never blocked on us, so this ends).
    func spin() { while !value { sched_yield() } }  // On two cores the other thread may need this one's core.
}

private final class RaceB: Sendable {}
private final class RaceA: Sendable {
    let b: RaceB
    init(b: RaceB) { self.b = b }
}
private final class RaceRoot: Sendable {
    let a: RaceA
    init(a: RaceA) { self.a = a }
}
private final class RaceC: Sendable {
    let b: RaceB, a: RaceA
    init(b: RaceB, a: RaceA) { self.b = b; self.a = a }
}

private final class SlowShared: Sendable {
}
private final class AsyncRoot: Sendable {}

private final class Alpha: Sendable { init(_ beta: Beta) {} }
private final class Beta: Sendable { init(_ alpha: Alpha) {} }
private final class Gamma: Sendable {}
private final class Delta: Sendable {}

@Suite("Cycle detection")
struct CycleDetectionTests {
    @Test("a wait for a build that finished before the waiter joined the wait-for graph is not a cycle")
    func staleWaitIsNotACycle() {
        // Root → A → B, C → B, C → A. Thread 1 resolves Root and builds A; thread 2 resolves C and builds B.
        // Thread 1 is told to wait for B; before it joins the wait-for graph, B finishes and thread 2 waits
        // for A (owned by thread 1). Thread 1's wait for B is stale: no cycle, and B is there to take.
        let container = InjectionContainer()
        let oneToldToWait = Gate(), twoWaitsForA = Gate()
        InjectionProbe.onWait(in: container) { type in
            guard type == RaceB.self else { return }
            oneToldToWait.open()
            _ = twoWaitsForA.wait()
        } afterJoining: { type in
            if type == RaceA.self { twoWaitsForA.open() }
        }
        let bStarted = Gate()
        container.register(RaceB.self) {
            bStarted.open()
            _ = oneToldToWait.wait()
            return RaceB()
        }
        container.register(RaceA.self) { [unowned container] in
            _ = bStarted.wait()
            return RaceA(b: try container.resolve(RaceB.self))
        }
        container.register(RaceRoot.self) { [unowned container] in RaceRoot(a: try container.resolve(RaceA.self)) }
        container.register(RaceC.self) { [unowned container] in
            RaceC(b: try container.resolve(RaceB.self), a: try container.resolve(RaceA.self))
        }
        let errors = Collector<String>()
        let results = Collector<ObjectIdentifier>()
        #expect(runOnThreads(2) { thread in
            do {
                if thread == 0 {
                    results.append(ObjectIdentifier(try container.resolve(RaceRoot.self).a.b))
                } else {
                    results.append(ObjectIdentifier(try container.resolve(RaceC.self).b))
                }
            } catch {
                errors.append("thread \(thread + 1): \(error)")
            }
        })
        #expect(errors.values.isEmpty)
        #expect(results.values.count == 2 && Set(results.values).count == 1, "both see the one B")
    }

    @Test("an acyclic graph never reports a cycle when a build finishes just as another thread starts waiting for it")
    func noFalseCycleWhenWaitMeetsFinish() {
        // Root → A → B, C → B, C → A. Thread 1 resolves Root and builds A; thread 2 resolves C and builds B.
        // Thread 1 asks for B while thread 2's build of B finishes; thread 2 then asks for A, which thread 1
        // is building, and waits. Thread 1's wait for B is stale the moment B finishes: following it from B's
        // owner (thread 2, now waiting for A, owned by thread 1) must not close a cycle.
        let rounds = 10_000
        let errors = Collector<String>()
        let barrier = Barrier(count: 2)
        let containers = (0..<rounds).map { _ in InjectionContainer() }
        let flags = (0..<rounds).map { _ in (bStarted: Flag(), oneWantsB: Flag()) }
        for (container, flags) in zip(containers, flags) {
            container.register(RaceB.self) {
                flags.bStarted.set()
                flags.oneWantsB.spin()  // Finish right as thread 1 starts its wait for B.
                return RaceB()
            }
            container.register(RaceA.self) { [unowned container] in
                flags.bStarted.spin()
                flags.oneWantsB.set()
                return RaceA(b: try container.resolve(RaceB.self))
            }
            container.register(RaceRoot.self) { [unowned container] in RaceRoot(a: try container.resolve(RaceA.self)) }
            container.register(RaceC.self) { [unowned container] in
                RaceC(b: try container.resolve(RaceB.self), a: try container.resolve(RaceA.self))
            }
        }
        // 100 rounds, then more up to `rounds` for at most 5 seconds (ThreadSanitizer runs fewer): thread 1
        // decides whether to go on, between two meetings, so both threads run the same rounds.
        let deadline = Date(timeIntervalSinceNow: 5)
        let goOn = Flag(), ran = Counter()
        let finished = runOnThreads(2, timeout: 120) { thread in
            for round in 0..<rounds {
                guard barrier.arrive() else { return }
                if thread == 0 && (round < 100 || Date() < deadline) { goOn.set() }
                guard barrier.arrive() else { return }
                guard goOn.value else { return }
                guard barrier.arrive() else { return }
                if thread == 0 { goOn.clear(); ran.increment() }
                do {
                    if thread == 0 { _ = try containers[round].resolve(RaceRoot.self) } else { _ = try containers[round].resolve(RaceC.self) }
                } catch {
                    errors.append("round \(round), thread \(thread + 1): \(error)")
                }
            }
        }
        #expect(finished)
        #expect(errors.values.isEmpty, "\(errors.values.count) of \(ran.value) rounds failed, first: \(errors.values.first ?? "")")
        #expect(ran.value >= 100, "only \(ran.value) rounds ran")
    }

    @Test("child tasks of an async factory resolving the same slow type are not a cycle", .isolatedInjection)
    func siblingTasksAreNotACycle() async throws {
        let errors = Collector<String>()
        let builds = Counter(), arrived = Counter()
        InjectionManager.register(SlowShared.self) {
            builds.increment()
            // Slow: it waits until the other child task asks for it too and waits for this build. Both need a
            // thread of the cooperative pool, so the waits are bounded like the 0.2 s pause they replace (the
            // test holds either way).
            if arrived.wait(atLeast: 2, seconds: 0.2) {
                let container = InjectionManager.currentContainer
                waitUntil(seconds: 0.2) { InjectionProbe.buildWaiters(for: SlowShared.self, in: container) != nil }
            }
            return SlowShared()
        }
        InjectionManager.registerAsync(AsyncRoot.self) { () async -> AsyncRoot in
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        arrived.increment()
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

    @Test("a cycle across two threads is reported as a cycle, never a deadlock", .isolatedInjection)
    func crossThreadCycle() {
        let container = InjectionContainer()
        let alphaStarted = Latch(), betaStarted = Latch()
        // Factories resolve from the container running them; capturing `container` would be a retain cycle.
        container.register(Alpha.self) {
            alphaStarted.open()
            betaStarted.wait()
            return Alpha(try InjectionManager.resolve(Beta.self))
        }
        container.register(Beta.self) {
            betaStarted.open()
            alphaStarted.wait()
            return Beta(try InjectionManager.resolve(Alpha.self))
        }
        let errors = Collector<InjectionError>()
        let finished = runOnThreads(2) { index in
            do throws(InjectionError) {
                if index == 0 { _ = try container.resolve(Alpha.self) } else { _ = try container.resolve(Beta.self) }
            } catch {
                errors.append(error)
            }
        }
        #expect(finished, "the two threads deadlocked")
        #expect(errors.values.count == 2)
        for error in errors.values {
            #expect(error.kind == .cycle)
            #expect(Set(error.chain) == ["Alpha", "Beta"])
            #expect(error.chain.first == error.chain.last)
        }
    }

    @Test("two threads resolving the same type at once is not a cycle", .isolatedInjection)
    func concurrentResolveIsNotACycle() {
        let container = InjectionContainer()
        let arrivals = Counter(), overlaps = Counter()
        container.register(Gamma.self) { Gamma() }
        container.register(Delta.self) { [unowned container] in
            // The first build holds on until the other thread was told to wait for it: the two overlap.
            if arrivals.increment() == 1, waitUntil({ InjectionProbe.buildWaiters(for: Delta.self, in: container) != nil }) {
                overlaps.increment()
            }
            _ = Inject(Gamma.self)
            return Delta()
        }
        let failures = Counter()
        let finished = runOnThreads(2) { _ in
            if (try? container.resolve(Delta.self)) == nil { failures.increment() }
        }
        #expect(finished)
        #expect(overlaps.value == 1, "the second resolve never waited for the first one's build")
        #expect(arrivals.value == 1, "built twice")
        #expect(failures.value == 0)
    }

    @Test("a resolve never reports a cycle through a thread that is waking from a build that just finished")
    func noCycleThroughFinishedBuild() {
        // Acyclic: Pair needs Shared then Second; Second needs Shared. Thread 1 builds Shared (inside
        // Pair) while thread 2, building Second, waits for it; thread 1 then needs Second, whose
        // build thread 2 still owns while it wakes up. That is a wait, not a cycle.
        final class Shared: Sendable {}
        final class Second: Sendable { let shared: Shared; init(shared: Shared) { self.shared = shared } }
        final class Pair: Sendable {
            let shared: Shared, second: Second
            init(shared: Shared, second: Second) { self.shared = shared; self.second = second }
        }
        let errors = Collector<String>()
        var attempts = 0
        for _ in 0..<40 where errors.values.isEmpty {
            attempts += 1
            let container = InjectionContainer()
            let sharedStarted = Gate(), releaseShared = Gate(), secondNeedsShared = Gate(), pairDone = Gate(), secondDone = Gate()
            let secondWaits = Gate()
            InjectionProbe.onWait(in: container, beforeJoining: nil) { type in
                if type == Shared.self { secondWaits.open() }
            }
            container.register(Pair.self) { [unowned container] in
                let shared = try container.resolve(Shared.self)
                return Pair(shared: shared, second: try container.resolve(Second.self))
            }
            container.register(Second.self) { [unowned container] in
                secondNeedsShared.open()
                return Second(shared: try container.resolve(Shared.self))
            }
            container.register(Shared.self) { sharedStarted.open(); releaseShared.wait(); return Shared() }
            onThread {
                do { _ = try container.resolve(Pair.self) } catch { errors.append("resolve(Pair): \(error)") }
                pairDone.open()
            }
            #expect(sharedStarted.wait())
            onThread {
                do { _ = try container.resolve(Second.self) } catch { errors.append("resolve(Second): \(error)") }
                secondDone.open()
            }
            #expect(secondNeedsShared.wait())
            secondWaits.wait()  // Second's thread is now waiting for Shared's build.
            releaseShared.open()
            #expect(pairDone.wait() && secondDone.wait())
        }
        #expect(errors.values.isEmpty, "after \(attempts) attempts: \(errors.values)")
    }
}

// MARK: - A task started inside a factory, after the factory returned

private final class Refresher: Sendable { let serial: Int; init(serial: Int) { self.serial = serial } }
private final class SyncRefresher: Sendable { let serial: Int; init(serial: Int) { self.serial = serial } }

/// A string under a lock.
private final class Reported: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    func set(_ value: String) { lock.withLock { text = value } }
    var value: String { lock.withLock { text } }
}

private final class NeverRegistered: Sendable {}

@Suite("Cycle detection: tasks that outlive the factory that started them")
struct OutlivingTaskCycleTests {
    // A task started inside a factory inherits its chain, so that resolving the type under construction
    // while the factory runs is a cycle. Once the factory has returned there is nothing under
    // construction: resolving the type again (after a logout, say) builds a new instance.

    @Test("a task an async factory started resolves its type after a reset, with no false cycle")
    func taskOfAsyncFactoryAfterReset() async throws {
        let container = InjectionContainer()
        let runs = Counter(), gate = AsyncGate(), done = AsyncGate(), result = Reported()
        container.registerAsync(Refresher.self) { [unowned container] () async -> Refresher in
            let serial = runs.increment()
            if serial == 1 {
                Task {  // A background refresher, as a session store might start.
                    await gate.wait()
                    do { result.set("ok \(try await container.resolveAsync(Refresher.self).serial)") } catch { result.set("\(error)") }
                    done.open()
                }
            }
            return Refresher(serial: serial)
        }
        #expect(try await container.resolveAsync(Refresher.self).serial == 1)
        container.reset()
        gate.open()
        await done.wait()
        #expect(result.value == "ok 2")
    }

    @Test("a task a synchronous factory started under withContainer resolves its type after a reset, with no false cycle")
    func taskOfSyncFactoryAfterReset() async throws {
        let container = InjectionContainer()
        let runs = Counter(), gate = AsyncGate(), done = AsyncGate(), result = Reported()
        container.register(SyncRefresher.self) { [unowned container] () -> SyncRefresher in
            let serial = runs.increment()
            if serial == 1 {
                InjectionManager.withContainer(container) {  // Binds the container for the task, as Docs/Concurrency.md advises.
                    _ = Task {
                        await gate.wait()
                        do { result.set("ok \(try await InjectionManager.resolveAsync(SyncRefresher.self).serial)") } catch { result.set("\(error)") }
                        done.open()
                    }
                }
            }
            return SyncRefresher(serial: serial)
        }
        #expect(try container.resolve(SyncRefresher.self).serial == 1)
        container.reset()
        gate.open()
        await done.wait()
        #expect(result.value == "ok 2")
    }

    @Test("a task a synchronous factory started resolves its type while the factory runs: a cycle, not a hang")
    func taskOfSyncFactoryWhileItRuns() async throws {
        // The guarantee the chain is kept for: this still holds.
        let container = InjectionContainer()
        let result = Reported()
        container.register(SyncRefresher.self) { [unowned container] () -> SyncRefresher in
            let finished = DispatchSemaphore(value: 0)
            InjectionManager.withContainer(container) {
                _ = Task {
                    do { result.set("ok \(try await InjectionManager.resolveAsync(SyncRefresher.self).serial)") } catch { result.set("\(error)") }
                    finished.signal()
                }
            }
            finished.wait()  // The factory waits for its task: resolving this type there would never end.
            return SyncRefresher(serial: 1)
        }
        // On a thread of the test's own: the factory blocks it until the task, on the tasks' pool, is done.
        #expect(await onOwnThread { try? container.resolve(SyncRefresher.self) }?.serial == 1)
        #expect(result.value.hasPrefix("Injection: dependency cycle: SyncRefresher → SyncRefresher."), "\(result.value)")
    }

    /// Transients 40 deep, resolved before (their edges recorded),
    /// each starting a task under `withContainer`, which inherits the chain; the tasks run only after every
    /// factory returned and the thread resolved other chains. Each task then sees no chain: its type is no
    /// cycle, and an error names only what it asked for.
    @Test("tasks started 40 deep in a chain of cached transients resolve after the chain is gone: no cycle, no stale chain")
    func tasksOutliveDeepChainOfCachedTransients() async throws {
        let depth = 40
        let container = InjectionContainer()
        let gate = AsyncGate()
        let results = Collector<String>()
        let tasks = Collector<Task<Void, Never>>()
        let live = LiveTokens(), registrations = LiveTokens()
        let spawn = AtomicWord(0)
        func link<T: STKeyed>(_: T.Type, level: Int) {
            let token = CountedToken(level, serial: 0, live: registrations)
            container.register(T.self, lifetime: .transient) { [unowned container] in
                if level + 1 < depth { let next: any STKeyed.Type = stKeys[level + 1]; _ = try stResolve(next, in: container) }
                if spawn.value == 1 {
                    InjectionManager.withContainer(container) {
                        tasks.append(Task {
                            await gate.wait()
                            // The type whose factory started this task, long returned: no cycle.
                            let own: any STKeyed.Type = stKeys[level]
                            if (try? stResolve(own, in: container)) == nil { results.append("level \(level): own type failed") }
                            do {
                                _ = try container.resolve(NeverRegistered.self)
                                results.append("level \(level): resolved an unregistered type")
                            } catch {
                                let error = error as! InjectionError
                                if error.chain.count != 1 { results.append("level \(level): stale chain \(error.chain)") }
                            }
                        })
                    }
                }
                return T(token: CountedToken(token.index, serial: 0, live: live))
            }
        }
        for level in 0..<depth { link(stKeys[level], level: level) }
        await onOwnThread {
            for _ in 0..<3 { _ = try? stResolve(stKeys[0], in: container) }  // Every link cached.
            spawn.value = 1
            _ = try? stResolve(stKeys[0], in: container)
            spawn.value = 0
            // Other chains, on the same thread.
            for start in stride(from: 0, to: depth, by: 5) { _ = try? stResolve(stKeys[start], in: container) }
        }
        #expect(tasks.values.count == depth)
        gate.open()
        for task in tasks.values { await task.value }
        #expect(results.values.isEmpty, "\(results.values.prefix(5))")
        #expect(live.alive == 0)
        _ = container
    }
}
