import Foundation
import Injection
import InjectionTesting
import Testing

// A resolution's frames are touched only by the thread running that resolution. A task started inside
// a factory sees the factory's chain (for messages and cycles) but belongs to none of its resolutions:
// it records no edges on the factory's frame and joins none of its waits or deferred work.

private final class TaskTarget: Sendable {}
private final class FactoryDependency: Sendable {}
private final class Spawner: Sendable {}

@Suite("Frame confinement")
struct FrameConfinementTests {
    @Test("a task started inside a factory resolves while the factory resolves too, and neither touches the other's frame")
    func taskInsideFactoryLeavesFrameAlone() async {
        let container = InjectionContainer()
        let taskStarted = Gate()
        let tasks = Collector<Task<Int, Never>>()
        let iterations = 20_000
        container.register(TaskTarget.self) { TaskTarget() }
        container.register(FactoryDependency.self) { FactoryDependency() }
        container.register(Spawner.self) {
            InjectionManager.withContainer(InjectionManager.currentContainer) {
                tasks.append(Task { [iterations] in
                    taskStarted.open()
                    var resolved = 0
                    for _ in 0..<iterations where (try? InjectionManager.resolve(TaskTarget.self)) != nil { resolved += 1 }
                    return resolved
                })
            }
            _ = taskStarted.wait()
            // The factory's own resolves, while the task's run: both used to append to this frame's edges.
            for _ in 0..<iterations { _ = try InjectionManager.resolve(FactoryDependency.self) }
            return Spawner()
        }
        // On a thread of its own: the factory blocks until the task starts, and the task needs a thread
        // of the cooperative pool, which this test must not hold meanwhile.
        let resolved = await withCheckedContinuation { continuation in
            onThread { continuation.resume(returning: (try? container.resolve(Spawner.self)) != nil) }
        }
        #expect(resolved)
        #expect(!tasks.values.isEmpty, "the factory started no task")
        for task in tasks.values { #expect(await task.value == iterations) }
        // The factory's edges are its own; the task's resolves belong to no resolution of Spawner.
        let edges = container.dependencyGraph().edges.map { "\($0.from) → \($0.to)" }
        #expect(edges == ["Spawner → FactoryDependency"])
    }
}
