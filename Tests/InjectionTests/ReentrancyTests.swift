import Foundation
@_spi(Testing) import InjectionTesting
import InjectionTesting
import Testing

// Factories (and deinits of evicted instances) that call back into the container. Each runs on a
// thread of its own with a timeout, so a deadlock fails the test instead of hanging the run.

private final class Made: Sendable {
    let name: String
    let serial: Int
    init(_ name: String, serial: Int = 0) {
        self.name = name
        self.serial = serial
    }
}

private enum ReentrantOuter: InjectionKey { typealias Value = Made }
private enum ReentrantInner: InjectionKey { typealias Value = Made }
private enum ReentrantLeaf: InjectionKey { typealias Value = Made }
private enum ReentrantAdded: InjectionKey { typealias Value = Made }
private enum ReentrantRemoved: InjectionKey { typealias Value = Made }

/// A type whose factory checks the graph on first use, as some apps do.
private final class SelfChecking: Sendable {}

/// A type whose factory checks the graph from a task it starts, as an app that verifies in the background.
private final class ChecksInATask: Sendable {}

/// Calls the container from its deinit, which runs when a reset releases it.
private final class CallsBackOnDeinit: Sendable {
    let container: InjectionContainer
    let done: Counter
    init(container: InjectionContainer, done: Counter) {
        self.container = container
        self.done = done
    }
    deinit {
        _ = try? container.resolve(ReentrantLeaf.self)
        container.register(ReentrantAdded.self) { Made("added by a deinit") }
        container.unregister(ReentrantRemoved.self)
        done.increment()
    }
}

/// Calls the container from `dispose()`, which runs when a reset, an unregister or a re-registration
/// evicts it, after the container's lock is dropped.
private final class CallsBackOnDispose: InjectionDisposable, Sendable {
    let container: InjectionContainer
    let done: Counter
    let resolved = Counter()
    init(container: InjectionContainer, done: Counter) {
        self.container = container
        self.done = done
    }
    func dispose() {
        if (try? container.resolve(ReentrantLeaf.self)) != nil { resolved.increment() }
        container.register(ReentrantAdded.self) { Made("added by dispose()") }
        container.unregister(ReentrantRemoved.self)
        done.increment()
    }
}

/// Runs `body` on a new thread; `false` if it did not finish within `seconds` (a deadlock).
private func finishes(within seconds: Double = waitLimit, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = Gate()
    onThread { body(); done.open() }
    return done.wait(seconds: seconds)
}

private final class CrossLeaf: Sendable {}
private final class CrossRoot: Sendable {
    let leaf: CrossLeaf
    init(leaf: CrossLeaf) { self.leaf = leaf }
}
private final class CrossOther: Sendable {}

@Suite("Reentrancy")
struct ReentrancyTests {
    @Test("a factory that registers, resolves what it registered, and unregisters finishes and is cached")
    func factoryRegistersResolvesUnregisters() throws {
        let container = InjectionContainer()
        container.register(ReentrantRemoved.self) { Made("removed") }
        container.register(ReentrantOuter.self) {
            InjectionManager.register(ReentrantAdded.self) { Made("added") }
            let added = try InjectionManager.resolve(ReentrantAdded.self)
            InjectionManager.unregister(ReentrantRemoved.self)
            _ = try InjectionManager.resolve(ReentrantLeaf.self)
            return Made("outer with \(added.name)")
        }
        container.register(ReentrantLeaf.self, lifetime: .transient) { Made("leaf") }
        let result = Collector<Made>()
        #expect(finishes { if let outer = try? container.resolve(ReentrantOuter.self) { result.append(outer) } })
        let outer = try #require(result.values.first)
        #expect(outer.name == "outer with added")
        #expect(try container.resolve(ReentrantOuter.self) === outer)  // Nothing it did evicted it.
        #expect(container.isRegistered(ReentrantAdded.self) && !container.isRegistered(ReentrantRemoved.self))
    }

    @Test("a factory that re-registers its own type returns its instance without caching it")
    func factoryReRegistersItself() throws {
        let container = InjectionContainer()
        let runs = Counter()
        container.register(ReentrantOuter.self) {
            let run = runs.increment()
            InjectionManager.register(ReentrantOuter.self) { Made("replacement", serial: runs.increment()) }
            return Made("original", serial: run)
        }
        let result = Collector<Made>()
        #expect(finishes { if let outer = try? container.resolve(ReentrantOuter.self) { result.append(outer) } })
        #expect(result.values.map(\.name) == ["original"])
        let replacement = try container.resolve(ReentrantOuter.self)
        #expect(replacement.name == "replacement")
        #expect(try container.resolve(ReentrantOuter.self) === replacement)
        #expect(runs.value == 2)
    }

    @Test("a factory that unregisters its own type returns its instance and the type stays unregistered")
    func factoryUnregistersItself() {
        let container = InjectionContainer()
        container.register(ReentrantOuter.self) {
            InjectionManager.unregister(ReentrantOuter.self)
            return Made("last")
        }
        let result = Collector<Made>()
        #expect(finishes { if let outer = try? container.resolve(ReentrantOuter.self) { result.append(outer) } })
        #expect(result.values.map(\.name) == ["last"])
        let error = #expect(throws: InjectionError.self) { try container.resolve(ReentrantOuter.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.description.hasPrefix("Injection: no registration for ReentrantOuter.") == true)
    }

    @Test("a factory two levels down that resets abandons the whole build, and a thread waiting for it rebuilds")
    func nestedFactoryResetsWhileOthersWait() throws {
        let container = InjectionContainer()
        let leafRuns = Counter(), started = Gate(), proceed = Gate()
        container.register(ReentrantOuter.self) { Made("outer", serial: try InjectionManager.resolve(ReentrantInner.self).serial) }
        container.register(ReentrantInner.self) { Made("inner", serial: try InjectionManager.resolve(ReentrantLeaf.self).serial) }
        container.register(ReentrantLeaf.self) {
            let run = leafRuns.increment()
            if run == 1 {
                started.open()
                proceed.wait()
                InjectionManager.resetCurrentContainer()
            }
            return Made("leaf", serial: run)
        }
        let first = Collector<Made>(), second = Collector<Made>(), firstDone = Gate(), secondDone = Gate()
        onThread {
            if let outer = try? container.resolve(ReentrantOuter.self) { first.append(outer) }
            firstDone.open()
        }
        #expect(started.wait())
        onThread {
            if let outer = try? container.resolve(ReentrantOuter.self) { second.append(outer) }  // Waits for the build.
            secondDone.open()
        }
        // The second thread waits for the first one's build of the outer type before the reset.
        #expect(waitUntil { InjectionProbe.buildWaiters(for: ReentrantOuter.self, isKey: true, in: container) != nil })
        proceed.open()
        #expect(secondDone.wait())
        let waited = try #require(second.values.first)
        #expect(waited.serial == 2)  // Rebuilt in the new scope, not handed the abandoned build.
        #expect(try container.resolve(ReentrantOuter.self) === waited)
        #expect(firstDone.wait())
        #expect(first.values.map(\.serial) == [1])  // The resetting resolve still got its own instance.
    }

    @Test("a factory may run resetCurrentContainer { }: it registers atomically, and a resolve inside it fails clearly")
    func factoryRunsTransaction() throws {
        let container = InjectionContainer()
        let caught = Collector<InjectionError>()
        container.register(ReentrantLeaf.self) { Made("leaf") }
        container.register(ReentrantOuter.self) {
            InjectionManager.resetCurrentContainer {
                InjectionManager.register(ReentrantAdded.self) { Made("added in a factory") }
                do throws(InjectionError) {
                    _ = try InjectionManager.resolve(ReentrantLeaf.self)
                } catch {
                    caught.append(error)
                }
            }
            return Made("outer")
        }
        let result = Collector<Made>()
        #expect(finishes { if let outer = try? container.resolve(ReentrantOuter.self) { result.append(outer) } })
        let outer = try #require(result.values.first)
        let error = try #require(caught.values.first)
        #expect(error.kind == .resolvedDuringReset)
        #expect(error.chain == ["ReentrantOuter", "ReentrantLeaf"])
        #expect(error.description.hasPrefix("Injection: ReentrantLeaf was resolved inside resetCurrentContainer { }"))
        #expect(try container.resolve(ReentrantAdded.self).name == "added in a factory")
        #expect(try container.resolve(ReentrantOuter.self) !== outer)  // The block's reset abandoned the build.
    }

    @Test("a factory may call verify(): it finishes and reports the graph's problems")
    func factoryCallsVerify() throws {
        let container = InjectionContainer()
        let runs = Counter(), reports = Collector<String>()
        container.register(ReentrantLeaf.self) { Made("leaf") }
        container.register(ReentrantInner.self) { Made("inner", serial: try InjectionManager.resolve(ReentrantRemoved.self).serial) }
        container.register(ReentrantOuter.self) {
            if runs.increment() == 1 {  // verify() runs this factory again, in its copy.
                do throws(InjectionError) {
                    try InjectionManager.verify()
                    reports.append("sound")
                } catch {
                    reports.append(error.description)
                }
            }
            return Made("outer", serial: try InjectionManager.resolve(ReentrantLeaf.self).serial)
        }
        let result = Collector<Made>()
        #expect(finishes { if let outer = try? container.resolve(ReentrantOuter.self) { result.append(outer) } })
        #expect(result.values.count == 1)
        let report = try #require(reports.values.first)
        #expect(report.hasPrefix("Injection: verify() found 1 problem in 3 registrations:"))
        #expect(report.contains("no registration for ReentrantRemoved (resolving ReentrantInner → ReentrantRemoved)"))
        #expect(try container.resolve(ReentrantOuter.self) === result.values.first)
    }

    @Test("an evicted instance whose deinit resolves, registers and unregisters does not deadlock the reset")
    func deinitCallsBack() throws {
        let container = InjectionContainer()
        let deinits = Counter()
        container.register(ReentrantLeaf.self) { Made("leaf") }
        container.register(ReentrantRemoved.self) { Made("removed") }
        container.register(CallsBackOnDeinit.self) { [unowned container] in CallsBackOnDeinit(container: container, done: deinits) }
        _ = try container.resolve(CallsBackOnDeinit.self)  // Held by the container only.
        #expect(finishes { container.reset() })
        #expect(deinits.value == 1)
        #expect(container.isRegistered(ReentrantAdded.self) && !container.isRegistered(ReentrantRemoved.self))
        _ = try container.resolve(CallsBackOnDeinit.self)
        #expect(finishes { container.reset { container.register(ReentrantInner.self) { Made("inner") } } })
        #expect(deinits.value == 2)
        #expect(container.isRegistered(ReentrantInner.self))
    }

    @Test("an evicted instance whose dispose() resolves, registers and unregisters does not deadlock the eviction")
    func disposeCallsBack() throws {
        let container = InjectionContainer()
        let disposals = Counter()
        container.register(ReentrantLeaf.self) { Made("leaf") }
        container.register(CallsBackOnDispose.self) { [unowned container] in CallsBackOnDispose(container: container, done: disposals) }
        // Each way an instance is evicted: a reset, a re-registration, an unregister.
        let evictions: [(name: String, evict: @Sendable () -> Void)] = [
            ("a reset", { container.reset() }),
            ("a re-registration", {
                container.register(CallsBackOnDispose.self) { [unowned container] in CallsBackOnDispose(container: container, done: disposals) }
            }),
            ("an unregister", { container.unregister(CallsBackOnDispose.self) }),
        ]
        for (round, eviction) in evictions.enumerated() {
            container.register(ReentrantRemoved.self) { Made("removed") }
            container.unregister(ReentrantAdded.self) as Void
            let instance = try container.resolve(CallsBackOnDispose.self)
            #expect(finishes { eviction.evict() }, "\(eviction.name) deadlocked")
            #expect(disposals.value == round + 1, "\(eviction.name): dispose() ran once")
            #expect(instance.resolved.value == 1, "\(eviction.name): dispose() resolved")
            #expect(container.isRegistered(ReentrantAdded.self), "\(eviction.name): dispose() registered")
            #expect(!container.isRegistered(ReentrantRemoved.self), "\(eviction.name): dispose() unregistered")
        }
    }

    @Test("a factory may register, unregister and reset without deadlocking")
    func reentrantFactory() throws {
        let container = InjectionContainer()
        container.register((any API).self) {
            InjectionManager.register(Formatter.self) { Formatter() }
            InjectionManager.resetCurrentContainer()
            InjectionManager.unregister(Detail.self)
            return LiveAPI()
        }
        let api = try container.resolve((any API).self)
        #expect(container.isRegistered(Formatter.self))
        // The reset inside the factory abandoned the build, so it was not cached.
        #expect(try container.resolve((any API).self) !== api)
    }

    @Test("verify() called from a factory while that factory is being verified returns at once instead of recursing", .isolatedInjection)
    func verifyFromFactory() throws {
        let container = InjectionContainer()
        let runs = Counter()
        container.register(SelfChecking.self) { [unowned container] in
            runs.increment()
            try container.verify()             // the container it was registered in...
            try InjectionManager.verify()      // ...and the current one: inside verify(), the copy it resolves in
            return SelfChecking()
        }
        let done = Gate()
        let outcome = Collector<Bool>()
        onThread {
            // The factory verifies, which builds SelfChecking in a copy, whose factory's verify() must not
            // start another verification.
            outcome.append((try? container.resolve(SelfChecking.self)) != nil)
            outcome.append((try? container.verify()) != nil)
            done.open()
        }
        #expect(done.wait(), "verify() inside a factory recursed instead of returning")
        #expect(outcome.values == [true, true])
        #expect(runs.value == 4, "the resolve, its two verifications, and the direct verify(): once each")
    }

    // A task started inside a factory is not on a verification's worker thread, nor in the copy the
    // verification resolves in: verify() called there must still see the verification under way.
    @Test("verify() called from a task that a factory started during a verification returns at once, without running the factories again", .isolatedInjection)
    func verifyFromTaskStartedByFactory() async {
        let container = InjectionContainer()
        let runs = Counter(), nestedReturned = Counter(), waitedForTask = Collector<Bool>()
        container.register(ChecksInATask.self) { [unowned container] in
            // Only the first run starts a task: should the task's verify() run this factory again, that run
            // would start another, and so on without end.
            if runs.increment() == 1 {
                let returned = Gate()
                // On the main actor, not the cooperative pool: long synchronous tests running in parallel hold
                // the pool's threads (both of them, on a 2-core machine) for minutes under ThreadSanitizer,
                // and this factory's wait for the task must not depend on them.
                Task { @MainActor in
                    try? container.verify()
                    nestedReturned.increment()
                    returned.open()
                }
                // The task's verify() runs while this verification does: this factory waits for it to return.
                waitedForTask.append(returned.wait())
            }
            return ChecksInATask()
        }
        // On a thread of its own: the factory blocks a verification worker until the task has run; this test
        // holds no thread of the pool or the main actor meanwhile.
        let verified = await onOwnThread { (try? container.verify()) != nil }
        #expect(verified)
        #expect(waitedForTask.values == [true], "the task's verify() returned while the verification ran")
        #expect(nestedReturned.value == 1)
        #expect(runs.value == 1, "the factory ran \(runs.value) times: the verification's once, and none for the task's verify()")
    }

    @Test("a factory that resolves from another container, whose factory resolves back and defers postConstruction, works resolve after resolve on one thread")
    func reentrantContainersOnOneThread() throws {
        let outer = InjectionContainer(), inner = InjectionContainer()
        let outerPosts = Counter(), innerPosts = Counter()
        // Each factory resolves the other container through a weak reference: no cycle keeps them alive.
        outer.register(CrossLeaf.self) { CrossLeaf() }
        outer.register(CrossRoot.self) { [weak inner] in
            _ = try inner!.resolve(CrossOther.self)
            return CrossRoot(leaf: try InjectionManager.resolve())
        } postConstruction: { _ in outerPosts.increment() }
        inner.register(CrossOther.self) { [weak outer] in
            _ = try outer!.resolve(CrossLeaf.self)
            return CrossOther()
        } postConstruction: { _ in innerPosts.increment() }
        let thread = SizedStackThread()
        defer { thread.stop() }
        try thread.run {
            for round in 1...3 {
                let root = try outer.resolve(CrossRoot.self)
                #expect(root === (try outer.resolve(CrossRoot.self)))
                #expect(outerPosts.value == round)
                #expect(innerPosts.value == round)
                let bound = try InjectionManager.withContainer(inner) { try InjectionManager.resolve(CrossOther.self) }
                #expect(bound === (try inner.resolve(CrossOther.self)))
                outer.reset()
                inner.reset()
            }
        }
    }
}
