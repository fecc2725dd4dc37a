import Foundation
@_spi(Testing) import InjectionTesting
import InjectionTesting
import Testing

// A `.scoped` or `.singleton` instance is built exactly once per scope, however many threads race its first
// resolve and however many tasks await its async factory: the others wait for that one build.

@Suite("Exactly once")
struct ExactlyOnceTests {
    @Test("8 threads racing the first resolve of a slow scoped factory build it once")
    func racingFirstResolveBuildsOnce() throws {
        let container = InjectionContainer()
        let runs = Counter(), arrived = Counter()
        container.register((any API).self) { [unowned container] in
            runs.increment()
            // Slow: it returns only once all 8 threads have asked for the API, and one of them waits for this build.
            arrived.wait(atLeast: 8)
            #expect(waitUntil { InjectionProbe.buildWaiters(for: (any API).self, in: container) != nil }, "no thread waited for the build")
            return LiveAPI()
        }
        let results = Collector<ObjectIdentifier>()
        let finished = runOnThreads(8) { _ in
            arrived.increment()
            let api = try! container.resolve((any API).self)
            results.append(ObjectIdentifier(api))
        }
        #expect(finished)
        #expect(runs.value == 1)
        #expect(results.values.count == 8)
        #expect(Set(results.values).count == 1)
    }

    @Test("an async factory is built exactly once under 100 concurrent tasks", .isolatedInjection)
    func asyncExactlyOnce() async throws {
        let runs = Counter(), arrived = Counter(), allArrived = AsyncGate()
        // The construction finishes only once all 100 tasks have asked for the store.
        InjectionManager.registerAsync((any AsyncStore).self) { await allArrived.wait(); return await LiveAsyncStore.open(runs: runs) }
        let serials = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    if arrived.increment() == 100 { allArrived.open() }
                    return ObjectIdentifier(try await InjectionManager.resolveAsync((any AsyncStore).self))
                }
            }
            return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
        }
        #expect(runs.value == 1)
        #expect(serials.count == 1)
    }
}
