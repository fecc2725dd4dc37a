import Foundation
@_spi(Testing) import InjectionTesting
import Testing

// Waiters of a build that a reset abandons: they rebuild in the new scope at once, tasks as well as threads.
// However a build ends (it finishes or fails, a reset, a re-registration, an unregistration or `removeAll`
// abandons it), every thread and task waiting for it is woken.

private final class Slow: Sendable {}

/// A value one task sets and another reads once it is told.
private final class Slot<Value: Sendable>: @unchecked Sendable {  // Its state: under `lock`.
    private let lock = NSLock()
    private var stored: Value?

    func set(_ value: Value?) { lock.withLock { stored = value } }
    var value: Value? { lock.withLock { stored } }
}

/// How a build that threads and tasks wait for ends.
enum BuildEnd: String, CaseIterable, Sendable {
    case finishes, fails, reset, reregistered, unregistered, removeAll
}

private struct FirstRunFails: Error {}
private final class NumberedSlow: Sendable {
    let run: Int
    init(run: Int) { self.run = run }
}
private final class Held: Sendable {
    let run: Int
    init(run: Int) { self.run = run }
}

@Suite("Abandoned builds")
struct AbandonedBuildTests {
    @Test("a task waiting for a build that a reset abandons builds again in the new scope at once, not after the stale build")
    func asyncWaiterRebuildsAtOnce() async throws {
        let container = InjectionContainer()
        let firstStarted = AsyncGate(), releaseFirst = AsyncGate()
        let runs = Counter()
        container.registerAsync(Slow.self) { () async -> Slow in
            if runs.increment() == 1 {
                firstStarted.open()
                await releaseFirst.wait()
            }
            return Slow()
        }
        let first = Task { try await container.resolveAsync(Slow.self) }
        await firstStarted.wait()
        let second = Task { try await container.resolveAsync(Slow.self) }
        // The second resolve has claimed and is about to wait (or waits) for the first build.
        #expect(await poll { InjectionProbe.buildWaiters(for: Slow.self, in: container) != nil })

        container.reset()
        let secondDone = AsyncGate()
        let secondResult = Slot<Slow>()
        Task {
            let value: Slow? = try? await second.value
            secondResult.set(value)
            secondDone.open()
        }
        // A deadline, not a pause: it ends the wait only if the waiter never finishes.
        let timer = secondDone.opens()
        await secondDone.wait()
        timer.cancel()
        let rebuiltBeforeTheStaleBuildFinished = runs.value == 2
        releaseFirst.open()  // Whatever happened, the stale build finishes.
        let stale: Slow = try await first.value
        // Never await `second` unbounded: a waiter nobody resumes would hang the test run, not fail it.
        #expect(rebuiltBeforeTheStaleBuildFinished, "the waiter waited for the abandoned build instead of rebuilding")
        let rebuilt: Slow = try #require(secondResult.value, "the waiter must get an instance")
        #expect(rebuilt !== stale, "the waiter must get the new scope's instance")
        let cached: Slow = try container.resolve(Slow.self)
        #expect(cached === rebuilt, "the new scope caches the rebuilt instance, not the stale one")
    }

    @Test("threads waiting for a build abandoned by a reset build in the new scope")
    func waitersOfAbandonedBuildRetry() throws {
        let container = InjectionContainer()
        let release = Gate(), started = Gate()
        let serial = Counter()
        container.register(Session.self) {
            let number = serial.increment()
            if number == 1 { started.open(); release.wait() }
            return Session(user: "u", serial: number)
        }
        let results = Collector<Int>()
        onThread { results.append(try! container.resolve(Session.self).serial) }
        #expect(started.wait())
        let waiterDone = Gate()
        onThread { results.append(try! container.resolve(Session.self).serial); waiterDone.open() }
        #expect(waitUntil { InjectionProbe.buildWaiters(for: Session.self, in: container) != nil }, "the second thread never waited for the build")
        container.reset()
        #expect(waiterDone.wait())
        release.open()
        let current = try container.resolve(Session.self)
        #expect(current.serial == 2)
        #expect(serial.value == 2)
    }

    @Test("threads and tasks waiting for a build are all woken however the build ends", arguments: BuildEnd.allCases)
    func waitersAreWokenHoweverTheBuildEnds(end: BuildEnd) async throws {
        let container = InjectionContainer()
        let runs = Counter(), started = Latch(), release = Latch()
        let register = {
            _ = container.register(NumberedSlow.self) {
                let run = runs.increment()
                if run == 1 {
                    started.open()
                    // A safety net only: the test opens `release` itself. The cooperative pool, which the
                    // waiting tasks and this test's body need, may be held by other tests' blocking waits
                    // for many seconds under load; the build must not end before every waiter is counted.
                    _ = release.wait(seconds: 600)
                    if end == .fails { throw FirstRunFails() }
                }
                return NumberedSlow(run: run)
            }
        }
        register()
        let builderDone = Latch()
        onThread {
            _ = try? container.resolve(NumberedSlow.self)
            builderDone.open()
        }
        #expect(started.wait())
        let threadsDone = Counter()
        let threadResults = Collector<Result<Int, InjectionError>>()
        for _ in 0..<3 {
            onThread {
                do throws(InjectionError) {
                    threadResults.append(.success(try container.resolve(NumberedSlow.self).run))
                } catch {
                    threadResults.append(.failure(error))
                }
                threadsDone.increment()
            }
        }
        let tasks = (0..<3).map { _ in
            Task.detached { () -> Result<Int, InjectionError> in
                do throws(InjectionError) { return .success(try await container.resolveAsync(NumberedSlow.self).run) } catch { return .failure(error) }
            }
        }
        // Every task suspended in the build's waiters (at least one thread waits too). The tasks need the
        // cooperative pool, which other tests' blocking waits may hold for a minute (seen under
        // ThreadSanitizer with the machine loaded).
        await poll { (InjectionProbe.buildWaiters(for: NumberedSlow.self, in: container) ?? 0) >= 3 }
        #expect(InjectionProbe.buildWaiters(for: NumberedSlow.self, in: container) == 3, "the tasks never waited (\(end))")
        #expect(InjectionProbe.buildWaiters(for: NumberedSlow.self, in: container) != nil)
        switch end {
        case .finishes, .fails: release.open()
        case .reset: container.reset()
        case .reregistered: register()
        case .unregistered: container.unregister(NumberedSlow.self)
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
        #expect(try container.resolve(Held.self).run == 1)  // Held weakly, then gone.
        let results = Collector<Int>()
        onThread { results.append((try? container.resolve(Held.self))?.run ?? -1) }
        #expect(entered.wait())
        onThread { results.append((try? container.resolve(Held.self))?.run ?? -1) }
        #expect(waitUntil { InjectionProbe.buildWaiters(for: Held.self, in: container) != nil })
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
