import Foundation
import Injection
import Testing

// Isolation is per task: a container bound with `withContainer` is what `InjectionManager` acts on in that
// task and its child tasks, however many tasks do the same at once; work sent outside structured
// concurrency sees the process-wide container, and a factory resolves from the container running it. A copy
// of a container (what `.isolatedInjection` makes) and its original never see each other's changes, however
// many threads change both.

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

    /// A container with 3000 registrations, copied over and over by two threads while a third keeps
    /// changing 200 of its keys (re-registering, unregistering, resolving, resetting); each copy is checked
    /// against the 2800 keys nobody changes, then changed itself (its keys re-registered with a serial of its
    /// own, or unregistered), and the source must still show none of the copy's changes; copies of copies too.
    @Test("copies of a container with 3000 registrations, changed on both sides by several threads, never see each other's changes")
    func copiesChangedOnBothSides() throws {
        let total = 3000, hot = 200
        let live = LiveTokens(), registrations = LiveTokens()
        let failures = Collector<String>()
        do {
            let source = InjectionContainer()
            for index in 0..<total {
                stRegister(stKeys[index], index: index, serial: 0, in: source, lifetime: index % 3 == 0 ? .transient : .scoped,
                           live: live, registrations: registrations)
            }
            let done = Counter()
            let finished = runOnThreads(3) { thread in
                var random = SeededRandom(seed: UInt64(thread + 99))
                if thread == 0 {
                    for step in 0..<3000 {
                        let i = Int.random(in: 0..<hot, using: &random)
                        switch step % 10 {
                        case 0..<4:
                            stRegister(stKeys[i], index: i, serial: step + 1, in: source, lifetime: .scoped, live: live,
                                       registrations: registrations)
                        case 4..<6: stUnregister(stKeys[i], in: source)
                        case 6..<9: _ = try? stResolve(stKeys[i], in: source)
                        default: source.reset()
                        }
                    }
                    done.increment()
                } else {
                    var copies = 0
                    while done.value == 0 || copies < 3 {
                        copies += 1
                        var copy = InjectionContainer(copying: source)
                        if copies % 4 == 0 { copy = InjectionContainer(copying: copy) }
                        // The stable keys, sampled: present, with the source's factory.
                        var changed: [Int: Int] = [:]  // key → serial, or -1 unregistered
                        for _ in 0..<40 {
                            let i = Int.random(in: hot..<total, using: &random)
                            guard let resolved = try? stResolve(stKeys[i], in: copy) else {
                                if changed[i] == nil { failures.append("copy lacks stable key \(i)") }
                                continue
                            }
                            let expected = changed[i] ?? 0
                            if resolved.token.index != i || resolved.token.serial != expected {
                                failures.append("copy: key \(i) resolved \(resolved.token.index)/\(resolved.token.serial), expected \(i)/\(expected)")
                            }
                            // Change the copy's stable keys; the source must never see it.
                            let serial = -(thread * 1_000_000 + copies * 100 + changed.count + 1)
                            if Bool.random(using: &random) {
                                stRegister(stKeys[i], index: i, serial: serial, in: copy, lifetime: .scoped, live: live,
                                           registrations: registrations)
                                changed[i] = serial
                            } else {
                                stUnregister(stKeys[i], in: copy)
                                changed[i] = -1
                            }
                        }
                        for (i, serial) in changed {
                            if serial == -1 {
                                if stIsRegistered(stKeys[i], in: copy) { failures.append("copy: unregistered key \(i) is registered") }
                            } else if let resolved = try? stResolve(stKeys[i], in: copy), resolved.token.serial != serial {
                                failures.append("copy: key \(i) lost its re-registration")
                            }
                            guard let original = try? stResolve(stKeys[i], in: source) else {
                                failures.append("source lost stable key \(i) after a copy changed it")
                                continue
                            }
                            if original.token.serial != 0 || original.token.index != i {
                                failures.append("source: key \(i) resolved serial \(original.token.serial) after a copy changed it")
                            }
                        }
                        // The hot keys, in the copy: whatever the source had, a key's own factory.
                        for _ in 0..<10 {
                            let i = Int.random(in: 0..<hot, using: &random)
                            if let resolved = try? stResolve(stKeys[i], in: copy), resolved.token.index != i {
                                failures.append("copy: hot key \(i) resolved key \(resolved.token.index)")
                            }
                        }
                    }
                }
            }
            #expect(finished)
            // Every stable key of the source is still there, as registered.
            for i in hot..<total where i % 50 == 0 {
                let resolved = try stResolve(stKeys[i], in: source)
                #expect(resolved.token.index == i && resolved.token.serial == 0)
            }
            #expect(source.dependencyGraph().nodes.count >= total - hot)
        }
        #expect(failures.values.isEmpty, "\(failures.values.count) failures, first: \(failures.values.prefix(5))")
        #expect(waitUntil { live.alive == 0 && registrations.alive == 0 },
                "\(live.alive) instances, \(registrations.alive) registrations still alive")
    }
}
