import Foundation
import Injection
import InjectionTesting
import Testing

// An async construction runs in a task of its own: cancelling a task that waits for it (the first one
// included) never cancels the construction the others wait for. A main-actor build reached through
// `resolveAsync` is shared the same way; a factory that itself gives up when its caller is cancelled fails
// that caller only.

@MainActor private final class MainModel {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}

@Suite("Cancellation", .isolatedInjection)
struct CancellationTests {
    @Test("cancelling one waiting task does not cancel the construction the others wait for")
    func cancellationDoesNotCancelConstruction() async throws {
        let runs = Counter()
        let gate = AsyncGate()
        InjectionManager.registerAsync((any AsyncStore).self) {
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

    /// Tasks hop to the main actor for a main-actor factory; half of them are cancelled before they
    /// start. Cancellation is not the factory's concern: every task gets the scope's one instance, built
    /// once per scope.
    @Test("resolveAsync of a main-actor type from cancelled and live tasks: one instance per scope, built once")
    func mainActorResolveFromCancelledTasks() async {
        let container = InjectionContainer()
        let builds = Counter()
        container.register(MainModel.self, isolation: MainActor.shared) { MainModel(serial: builds.increment()) }
        for round in 1...10 {
            var tasks: [Task<Int, any Error>] = []
            for index in 0..<8 {
                let task = Task.detached { try await container.resolveAsync(MainModel.self).serial }
                if index % 2 == 0 { task.cancel() }
                tasks.append(task)
            }
            var serials: Set<Int> = []
            for task in tasks {
                do { serials.insert(try await task.value) } catch { Issue.record("round \(round): \(error)") }
            }
            #expect(serials == [round], "round \(round): \(serials)")
            #expect(builds.value == round)
            container.reset()
        }
    }

    /// A main-actor factory that gives up when its caller is cancelled: the build fails for that caller
    /// alone; the tasks that were not cancelled build it again and share it.
    @Test("a main-actor factory that throws for a cancelled caller fails that caller only")
    func mainActorFactoryCancelledCaller() async {
        let container = InjectionContainer()
        let builds = Counter()
        container.register(MainModel.self, isolation: MainActor.shared) {
            if Task.isCancelled { throw CancellationError() }
            return MainModel(serial: builds.increment())
        }
        for round in 1...10 {
            var tasks: [(cancelled: Bool, task: Task<Int, any Error>)] = []
            for index in 0..<6 {
                let task = Task.detached { try await container.resolveAsync(MainModel.self).serial }
                if index % 3 == 0 { task.cancel() }
                tasks.append((index % 3 == 0, task))
            }
            var serials: Set<Int> = []
            for (cancelled, task) in tasks {
                do {
                    serials.insert(try await task.value)
                } catch let error as InjectionError {
                    if !cancelled { Issue.record("round \(round): a task that was not cancelled failed: \(error)") }
                    #expect(error.underlyingError is CancellationError, "\(error)")
                } catch {
                    Issue.record("round \(round): \(error)")
                }
            }
            #expect(serials == [round], "round \(round): \(serials)")
            container.reset()
        }
    }
}
