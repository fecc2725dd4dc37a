import Foundation
@_spi(Testing) import Injection
import InjectionTesting
import Testing

// A cycle is reported only when the chain of resolutions waiting for one another really closes at that
// moment: never on an acyclic graph, whichever order threads build and wait in.

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false
    func set() { lock.withLock { isSet = true } }
    func clear() { lock.withLock { isSet = false } }
    var value: Bool { lock.withLock { isSet } }
    /// Spins until the flag is set (the other thread is never blocked on us, so this ends).
    func spin() { while !value {} }
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
    init() { Thread.sleep(forTimeInterval: 0.2) }
}
private final class AsyncRoot: Sendable {}

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
        // Up to `rounds`, for at most 5 seconds (ThreadSanitizer runs far fewer): thread 1 decides whether
        // to go on, between two meetings, so both threads run the same rounds.
        let deadline = Date(timeIntervalSinceNow: 5)
        let goOn = Flag(), ran = Counter()
        let finished = runOnThreads(2, timeout: 120) { thread in
            for round in 0..<rounds {
                guard barrier.arrive() else { return }
                if thread == 0 && (round == 0 || Date() < deadline) { goOn.set() }
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
}
