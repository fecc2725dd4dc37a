import Foundation
import Injection
import InjectionTesting
import Testing

// An async construction runs in a task of its own: cancelling a task that waits for it (the first one
// included) never cancels the construction the others wait for.

@Suite("Cancellation", .isolatedInjection)
struct CancellationTests {
    @Test("cancelling one waiting task does not cancel the construction the others wait for")
    func cancellationDoesNotCancelConstruction() async throws {
        let runs = Counter()
        let gate = AsyncGate()
        InjectionManager.register((any AsyncStore).self) {
            await gate.wait()
            #expect(!Task.isCancelled)  // The construction's own task is never cancelled.
            return LiveAsyncStore(serial: runs.increment())
        }
        let container = InjectionManager.currentContainer
        let first = Task { try await container.resolveAsync((any AsyncStore).self) }
        #expect(await gate.started())
        let second = Task { try await container.resolveAsync((any AsyncStore).self) }
        first.cancel()
        gate.open()
        let secondStore = try await second.value
        let firstStore = try await first.value  // The cancelled waiter still gets the instance.
        #expect(firstStore === secondStore)
        #expect(runs.value == 1)
    }
}
