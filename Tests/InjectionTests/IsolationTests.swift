import Foundation
import Injection
import Testing

// Isolation is per task: a container bound with `withContainer` is what `InjectionManager` acts on in that
// task and its child tasks, however many tasks do the same at once; work sent outside structured
// concurrency sees the process-wide container, and a factory resolves from the container running it.

private final class MockAPI: API {
    let name: String
    init(name: String) { self.name = name }
}

private actor Counter2 {
    var hits = 0
    func bindAndCount(_ container: InjectionContainer) async -> Int {
        await InjectionManager.withContainer(container) {
            await Task.yield()
            // Touching actor state without `await` compiles only because the operation stays on this actor.
            hits += 1
            assertIsolated()
            return hits
        }
    }
}

private final class Tagged: Sendable {
    let tag: Int
    init(tag: Int) { self.tag = tag }
}
private final class TaggedHolder: Sendable {
    let tagged: Tagged
    init(tagged: Tagged = Inject()) { self.tagged = tagged }
}

@Suite("Isolated containers")
struct IsolationTests {
    @Test("100 concurrent tasks each see only their own registration")
    func hundredTasksAreIsolated() async throws {
        let sharedBefore = InjectionManager.sharedContainer.isRegistered((any API).self)
        let names = try await withThrowingTaskGroup(of: (Int, String, String).self) { group in
            for index in 0..<100 {
                group.addTask {
                    try await InjectionManager.withContainer(InjectionContainer()) {
                        InjectionManager.register((any API).self) { MockAPI(name: "task-\(index)") }
                        await Task.yield()  // Let other tasks interleave between register and resolve.
                        let direct = try InjectionManager.resolve((any API).self).name
                        // A child task inherits the binding.
                        async let child = Inject((any API).self).name
                        return (index, direct, await child)
                    }
                }
            }
            return try await group.reduce(into: [(Int, String, String)]()) { $0.append($1) }
        }
        #expect(names.count == 100)
        for (index, direct, child) in names {
            #expect(direct == "task-\(index)")
            #expect(child == "task-\(index)")
        }
        #expect(InjectionManager.sharedContainer.isRegistered((any API).self) == sharedBefore)
    }

    @Test("registrations inside withContainer go to the bound container only")
    func syncBindingTargetsContainer() throws {
        let container = InjectionContainer()
        let viewModel = InjectionManager.withContainer(container) { () -> ViewModel in
            #expect(InjectionManager.currentContainer === container)
            InjectionManager.register((any API).self) { MockAPI(name: "mock") }
            InjectionManager.register((any Clock).self) { SystemClock() }
            return ViewModel()
        }
        #expect(viewModel.api.name == "mock")
        #expect(container.isRegistered((any API).self))
        #expect(InjectionManager.currentContainer !== container)
    }

    @Test("the innermost binding wins and the outer one comes back after")
    func nestedBindings() {
        let outer = InjectionContainer(), inner = InjectionContainer()
        outer.register((any API).self) { MockAPI(name: "outer") }
        inner.register((any API).self) { MockAPI(name: "inner") }
        InjectionManager.withContainer(outer) {
            #expect(Inject((any API).self).name == "outer")
            InjectionManager.withContainer(inner) {
                #expect(Inject((any API).self).name == "inner")
            }
            #expect(Inject((any API).self).name == "outer")
        }
    }

    @Test("task groups and unstructured tasks inherit the async binding")
    func asyncBindingIsInherited() async {
        let container = InjectionContainer()
        container.register((any API).self) { MockAPI(name: "bound") }
        await InjectionManager.withContainer(container) {
            let fromGroup = await withTaskGroup(of: String.self) { group in
                group.addTask { Inject((any API).self).name }
                return await group.next()!
            }
            let fromTask = await Task { Inject((any API).self).name }.value
            #expect(fromGroup == "bound")
            #expect(fromTask == "bound")
        }
    }

    @Test("the async withContainer runs on the caller's actor")
    func asyncBindingKeepsIsolation() async {
        let counter = Counter2()
        #expect(await counter.bindAndCount(InjectionContainer()) == 1)
        #expect(await counter.bindAndCount(InjectionContainer()) == 2)
    }

    @Test("work sent to a DispatchQueue sees the process-wide container, as documented")
    func dispatchQueueSeesSharedContainer() {
        let container = InjectionContainer()
        let seen = Collector<Bool>()
        let done = Gate()
        InjectionManager.withContainer(container) {
            DispatchQueue.global().async {
                seen.append(InjectionManager.currentContainer === InjectionManager.sharedContainer)
                done.open()
            }
        }
        #expect(done.wait())
        #expect(seen.values == [true])
    }

    @Test("a copy has the same registrations and none of the instances, and the two stay independent")
    func copyingContainer() throws {
        let original = InjectionContainer()
        original.register((any API).self) { MockAPI(name: "original") }
        original.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        let originalClock = try original.resolve((any Clock).self)
        let copy = InjectionContainer(copying: original)
        #expect(copy.isRegistered((any API).self))
        #expect(try copy.resolve((any Clock).self) !== originalClock)
        copy.register(Formatter.self) { Formatter() }
        original.unregister((any API).self)
        #expect(!original.isRegistered(Formatter.self))
        #expect(copy.isRegistered((any API).self))
    }

    @Test("a factory resolves its dependencies from the container running it, even off any binding")
    func factoryUsesItsContainer() throws {
        let container = InjectionContainer()
        container.register((any API).self) { MockAPI(name: "from container") }
        container.register((any Clock).self) { SystemClock() }
        container.register(ViewModel.self) { ViewModel() }
        let done = Gate()
        let names = Collector<String>()
        onThread {
            names.append((try? container.resolve(ViewModel.self).api.name) ?? "failed")
            done.open()
        }
        #expect(done.wait())
        #expect(names.values == ["from container"])
    }

    @Test("two bound containers: one resetting and re-registering never shows through Inject, InjectLazy, InjectProvider, tasks or a thread of the other")
    func boundContainersDoNotLeakIntoEachOther() async {
        let containers = [InjectionContainer(), InjectionContainer()]
        for (tag, container) in containers.enumerated() {
            container.register(Tagged.self) { Tagged(tag: tag) }
            container.register(TaggedHolder.self, lifetime: .transient) { TaggedHolder() }
        }
        let wrong = Collector<String>()
        await withTaskGroup(of: Void.self) { group in
            for (tag, container) in containers.enumerated() {
                group.addTask {
                    await InjectionManager.withContainer(container) {
                        for round in 0..<300 {
                            if tag == 0 {
                                InjectionManager.resetCurrentContainer {
                                    InjectionManager.register(Tagged.self) { Tagged(tag: tag) }
                                }
                                if round % 3 == 0 { InjectionManager.resetCurrentContainer() }
                            }
                            let lazy = InjectLazy(Tagged.self), provider = InjectProvider(Tagged.self)
                            let fromTask = await Task { Inject(TaggedHolder.self).tagged.tag }.value
                            let fromThread = await onOwnThread { (try? container.resolve(TaggedHolder.self))?.tagged.tag ?? -1 }
                            let seen = [Inject(Tagged.self).tag, lazy.value.tag, provider.value.tag, fromTask, fromThread]
                            if seen.contains(where: { $0 != tag }) { wrong.append("container \(tag) saw \(seen)") }
                        }
                    }
                }
            }
        }
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(3))")
    }
}
