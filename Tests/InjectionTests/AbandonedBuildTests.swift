import Foundation
@_spi(Testing) import Injection
import Testing

// Waiters of a build that a reset abandons: they rebuild in the new scope at once, tasks as well as threads.

private final class Slow: Sendable {}

/// A value one task sets and another reads once it is told.
private final class Slot<Value: Sendable>: @unchecked Sendable {  // Its state: under `lock`.
    private let lock = NSLock()
    private var stored: Value?

    func set(_ value: Value?) { lock.withLock { stored = value } }
    var value: Value? { lock.withLock { stored } }
}

@Suite("Abandoned builds")
struct AbandonedBuildTests {
    @Test("a task waiting for a build that a reset abandons builds again in the new scope at once, not after the stale build")
    func asyncWaiterRebuildsAtOnce() async throws {
        let container = InjectionContainer()
        let firstStarted = AsyncGate(), releaseFirst = AsyncGate()
        let runs = Counter()
        container.register(Slow.self) { () async -> Slow in
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
        #expect(await poll { InjectionProbe.buildHasWaiters(for: Slow.self, in: container) })

        container.resetCurrentContainer()
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
        #expect(waitUntil { InjectionProbe.buildHasWaiters(for: Session.self, in: container) }, "the second thread never waited for the build")
        container.resetCurrentContainer()
        #expect(waiterDone.wait())
        release.open()
        let current = try container.resolve(Session.self)
        #expect(current.serial == 2)
        #expect(serial.value == 2)
    }
}
