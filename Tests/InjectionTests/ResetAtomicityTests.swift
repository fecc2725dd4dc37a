import Foundation
import Injection
import InjectionTesting
import Testing

// A `resetCurrentContainer { }` block is one atomic step of its container: what it registers lands
// together with the reset when it returns, nothing of it lands if it throws (however deeply nested),
// inside it no path (not even another container's factory) resolves from the half-done container, and
// other threads see the old registrations or the new ones, never a mix.

private struct Abort: Error {}
private final class Marker: Sendable {
    let label: String
    init(_ label: String) { self.label = label }
}
private final class Extra: Sendable {}
private final class Bridge: Sendable {
    let marker: Marker
    init(marker: Marker) { self.marker = marker }
}
private final class Registrar: Sendable {}
private final class CachedBridge: Sendable {
    let marker: Marker
    init(marker: Marker) { self.marker = marker }
}

private enum ResetCombo: InjectionKey { typealias Value = Built }

/// Counts builds per registration (type and tag), as made by resolves that overlapped no commit.
///
/// A resolve that overlaps a commit belongs to the scope it started in: what it builds after the commit is
/// its own and never cached in the new scope, so it may build a new registration a second time. Builds are
/// held per thread until the resolve that made them is settled.
private final class BuildLog: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var pending: [ObjectIdentifier: [String]] = [:]
    func note(_ type: String, _ tag: Int) {
        let thread = ObjectIdentifier(Thread.current)
        lock.withLock { pending[thread, default: []].append("\(type)#\(tag)") }
    }
    /// Counts this thread's builds since the last call, unless their resolve overlapped a commit.
    func settle(overlappedCommit: Bool) {
        let thread = ObjectIdentifier(Thread.current)
        lock.withLock {
            let builds = pending.removeValue(forKey: thread) ?? []
            guard !overlappedCommit else { return }
            for build in builds { counts[build, default: 0] += 1 }
        }
    }
    var repeated: [String: Int] { lock.withLock { counts.filter { $0.value > 1 } } }
    var total: Int { lock.withLock { counts.values.reduce(0, +) } }
}

private final class R2Late: Sendable {
    let tag: String
    init(_ tag: String) { self.tag = tag }
}
private struct R2Failure: Error {}

/// What a synchronous resolve came to: the label of what it returned, or the kind of error it threw.
private func outcome(of resolve: () throws(InjectionError) -> String) -> String {
    do throws(InjectionError) { return "returned \"\(try resolve())\"" } catch { return error.kind.description }
}

/// Runs `outerBlock` on a thread of its own (so no test blocks the cooperative pool), inside
/// `container.reset { }`; `outerBlock` returns the task it started, which this hands back
/// once the block has returned. `afterCommit` runs on that thread right after the outer block returned.
private func runOuterBlock(
    of container: InjectionContainer, afterCommit: @escaping @Sendable () -> Void,
    _ outerBlock: @escaping @Sendable () -> Task<Void, Never>
) async -> Task<Void, Never>? {
    await withCheckedContinuation { (continuation: CheckedContinuation<Task<Void, Never>?, Never>) in
        onThread {
            var started: Task<Void, Never>?
            container.reset { started = outerBlock() }
            afterCommit()
            continuation.resume(returning: started)
        }
    }
}

@Suite("Reset atomicity")
struct ResetAtomicityTests {
    @Test("a nested block that throws leaves no trace when the outer block commits")
    func throwingNestedBlockLeavesNoTrace() throws {
        let container = InjectionContainer()
        container.register(Marker.self) { Marker("old") }
        container.register(Extra.self) { Extra() }
        container.reset {
            container.register(Bridge.self) { Bridge(marker: Marker("outer")) }
            #expect(throws: Abort.self) {
                try container.reset {
                    container.register(Marker.self) { Marker("inner") }
                    container.unregister(Extra.self)
                    throw Abort()
                }
            }
            #expect(container.isRegistered(Extra.self), "the thrown block's unregister is gone already inside the outer block")
            #expect(container.isRegistered(Bridge.self), "the outer block's own registration of a new type counts inside it")
        }
        #expect(try container.resolve(Marker.self).label == "old")
        #expect(container.isRegistered(Extra.self))
        #expect(container.isRegistered(Bridge.self))
    }

    @Test("a block that throws discards what its own nested blocks registered, however deep")
    func throwingMiddleBlockDiscardsInner() throws {
        let container = InjectionContainer()
        container.register(Marker.self) { Marker("old") }
        container.reset {
            #expect(throws: Abort.self) {
                try container.reset {
                    container.reset {
                        container.register(Marker.self) { Marker("innermost") }
                    }
                    throw Abort()
                }
            }
            container.register(Extra.self) { Extra() }
        }
        #expect(try container.resolve(Marker.self).label == "old")
        #expect(container.isRegistered(Extra.self))
    }

    // Concurrency.md: "A reset block is atomic however it is reached: a nested block that throws leaves no
    // trace". Of the nested block, that is: a task started in the outer block registers into the outer block,
    // and what it records while the nested block is open is not the nested block's to discard.
    @Test("a nested block that throws discards only its own operations, not a registration that a task started in the outer block recorded meanwhile")
    func throwingNestedBlockKeepsATasksRegistrationInTheOuterBlock() async {
        let container = InjectionContainer()
        container.register(Marker.self) { Marker("old") }
        let nestedIsOpen = AsyncGate()
        // On a thread of its own: the blocks wait for the task, and must not hold a thread of the pool meanwhile.
        let (task, taskRegistered) = await onOwnThread { () -> (Task<Void, Never>?, Bool) in
            var task: Task<Void, Never>?
            var taskRegistered = false
            container.reset {
                let registered = Gate()
                // Started in the outer block: it inherits the outer block, and its registration is the outer
                // block's. Its jobs run on threads of their own: it must not wait for a thread of the pool, which
                // long tests may hold for minutes under ThreadSanitizer while this block waits for it.
                task = Task(executorPreference: FreshThreadExecutor()) {
                    await nestedIsOpen.wait()
                    container.register(Extra.self) { Extra() }
                    registered.open()
                }
                #expect(throws: Abort.self) {
                    try container.reset {
                        container.register(Marker.self) { Marker("nested") }
                        nestedIsOpen.open()
                        taskRegistered = registered.wait()  // The task registers while this block is open.
                        throw Abort()
                    }
                }
            }
            return (task, taskRegistered)
        }
        await task?.value
        #expect(taskRegistered, "the task never registered while the nested block was open")
        #expect(container.isRegistered(Extra.self), "the nested block that threw discarded the registration a task recorded into the outer block")
        #expect((try? container.resolve(Marker.self))?.label == "old", "the nested block that threw landed")
    }

    @Test("inside A's block, a factory of container B that resolves from A is refused, and its registrations on A wait for the block")
    func otherContainersFactoryCannotBypass() throws {
        let a = InjectionContainer(), b = InjectionContainer()
        a.register(Marker.self) { Marker("old") }
        b.register(Bridge.self) { [unowned a] in Bridge(marker: try a.resolve(Marker.self)) }
        b.register(Registrar.self) { [unowned a] in
            a.register(Extra.self) { Extra() }
            return Registrar()
        }
        let seenFromOtherThread = Collector<Bool>()
        a.reset {
            a.register(Marker.self) { Marker("new") }
            let error = #expect(throws: InjectionError.self) { try b.resolve(Bridge.self) }
            #expect(error?.kind == .resolvedDuringReset)
            #expect(error?.chain == ["Bridge", "Marker"])
            _ = try? b.resolve(Registrar.self)
            let checked = Gate()
            onThread {
                seenFromOtherThread.append(a.isRegistered(Extra.self))
                checked.open()
            }
            #expect(checked.wait())
        }
        #expect(seenFromOtherThread.values == [false], "another thread saw the block's registration before the block ended")
        #expect(a.isRegistered(Extra.self))
        #expect(try b.resolve(Bridge.self).marker.label == "new")
    }

    @Test("inside A's block, B's transient resolved before cannot resolve from A either")
    func cachedTransientOfOtherContainerCannotBypass() throws {
        let a = InjectionContainer(), b = InjectionContainer()
        a.register(Marker.self) { Marker("old") }
        b.register(CachedBridge.self, lifetime: .transient) { [unowned a] in CachedBridge(marker: try a.resolve(Marker.self)) }
        for _ in 0..<4 { _ = try b.resolve(CachedBridge.self) }  // Run before, its edges recorded.
        a.reset {
            a.register(Marker.self) { Marker("new") }
            let error = #expect(throws: InjectionError.self) { try b.resolve(CachedBridge.self) }
            #expect(error?.kind == .resolvedDuringReset)
            let viaManager = #expect(throws: InjectionError.self) {
                try InjectionManager.withContainer(b) { try InjectionManager.resolve(CachedBridge.self) }
            }
            #expect(viaManager?.kind == .resolvedDuringReset)
        }
        #expect(try b.resolve(CachedBridge.self).marker.label == "new")
    }

    // MARK: As seen from other threads

    @Test("resetCurrentContainer { } is atomic as seen from other threads")
    func transactionIsAtomic() throws {
        let container = InjectionContainer()
        let built = Collector<String>()
        container.register(Session.self) { built.append("a"); return Session(user: "a") }
        _ = try container.resolve(Session.self)
        let stop = Counter()
        let seen = Collector<String>()
        let hammer = Gate(), sawA = Latch(), sawB = Latch()
        onThread {
            while stop.value == 0 {
                let user = try! container.resolve(Session.self).user
                seen.append(user)
                if user == "a" { sawA.open() } else { sawB.open() }
            }
            hammer.open()
        }
        sawA.wait()
        container.reset {
            // Widens the window in which a non-atomic reset would let the hammer rebuild "a"; the test holds either way.
            Thread.sleep(forTimeInterval: 0.05)
            container.register(Session.self) { built.append("b"); return Session(user: "b") }
        }
        sawB.wait()
        stop.increment()
        #expect(hammer.wait())
        #expect(built.values == ["a", "b"])
        let users = seen.values
        #expect(users.first == "a")
        #expect(users.last == "b")
        // Once "b" shows up, "a" never comes back.
        if let firstB = users.firstIndex(of: "b") { #expect(!users[firstB...].contains("a")) }
    }

    @Test("observers never see old and new registrations mixed by resetCurrentContainer { } of several types")
    func transactionOfSeveralTypesIsAtomic() {
        let container = InjectionContainer()
        let log = BuildLog()
        // Commits begun/ended, written by this thread only, read by observers.
        let begun = Counter(), ended = Counter()
        func register(tag: Int) {
            // In the order ResetCombo resolves them: applying them one by one would show as P > Q or Q > R.
            // The pauses widen the window in which a non-atomic commit would show; the test holds either way.
            container.register(ResetTop.self) { log.note("ResetTop", tag); return Built("ResetTop", tag: tag) }
            Thread.sleep(forTimeInterval: 0.000_1)
            container.register(ResetMiddle.self) { log.note("ResetMiddle", tag); return Built("ResetMiddle", tag: tag) }
            Thread.sleep(forTimeInterval: 0.000_1)
            container.register(ResetBottom.self) { log.note("ResetBottom", tag); return Built("ResetBottom", tag: tag) }
        }
        register(tag: 0)
        container.register(ResetCombo.self, lifetime: .transient) {
            Built("ResetCombo", dependencies: [
                try InjectionManager.resolve(ResetTop.self), try InjectionManager.resolve(ResetMiddle.self),
                try InjectionManager.resolve(ResetBottom.self),
            ])
        }
        let stop = Latch(), problems = Collector<String>(), observed = Counter(), tagsSeen = Collector<Int>()
        let observers = 4, commits = 150
        let finishedObserving = Collector<Int>(), observing = DispatchGroup()
        for index in 0..<observers {
            observing.enter()
            onThread {
                var lastTag = -1
                while !stop.wait(seconds: 0) {
                    let endedBefore = ended.value, begunBefore = begun.value
                    let resolved = try? container.resolve(ResetCombo.self)
                    let begunAfter = begun.value
                    log.settle(overlappedCommit: begunBefore != endedBefore || begunAfter != begunBefore)
                    guard let combo = resolved else {
                        problems.append("resolve(ResetCombo) failed")
                        continue
                    }
                    observed.increment()
                    let tags = combo.dependencies.map(\.tag)
                    if tags != tags.sorted() { problems.append("a resolve saw a newer registration before an older one: \(tags)") }
                    if tags.contains(where: { $0 < endedBefore }) {
                        problems.append("a resolve that began after commit \(endedBefore) saw \(tags)")
                    }
                    if begunBefore == endedBefore, begunAfter == begunBefore, Set(tags) != [endedBefore] {
                        problems.append("a resolve that overlapped no commit saw a mix: \(tags), expected all \(endedBefore)")
                    }
                    if tags[0] != lastTag { tagsSeen.append(tags[0]); lastTag = tags[0] }
                }
                finishedObserving.append(index)
                observing.leave()
            }
        }
        let pace = Date(timeIntervalSinceNow: 60)
        for tag in 1...commits {
            begun.increment()
            container.reset { register(tag: tag) }
            ended.increment()
            // The next commit waits until one more resolve than there are observers has finished: one began after this one.
            observed.wait(atLeast: observed.value + observers + 1, seconds: pace.timeIntervalSinceNow)
        }
        stop.open()
        _ = observing.wait(timeout: .now() + waitLimit)
        #expect(finishedObserving.values.count == observers)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(10))")
        // A non-atomic commit would let a resolve that overlapped no commit rebuild a registration.
        #expect(log.repeated.isEmpty, "built more than once per registration: \(log.repeated)")
        // The observers really did watch the commits happen.
        #expect(observed.value > commits)
        #expect(Set(tagsSeen.values).count > 10)
    }
}

/// The same guarantees seen from one task, through `InjectionManager` and the container a test binds.
@Suite("resetCurrentContainer { }", .isolatedInjection)
struct ResetBlockTests {
    @Test("registrations inside the block apply together with the reset")
    func registrationsApplyOnReturn() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        let before: Session = Inject()
        InjectionManager.resetCurrentContainer {
            InjectionManager.register(Session.self) { Session(user: "b") }
            InjectionManager.register((any API).self) { LiveAPI() }
            #expect(InjectionManager.isRegistered(Session.self))
            #expect(InjectionManager.isRegistered((any API).self), "a type new to the block is registered inside it")
        }
        #expect(InjectionManager.isRegistered((any API).self))
        let after: Session = Inject()
        #expect(before.user == "a")
        #expect(after.user == "b")
    }

    @Test("resolving inside the block throws resolvedDuringReset")
    func resolveInsideBlockThrows() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        InjectionManager.resetCurrentContainer {
            let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(Session.self) }
            #expect(error?.kind == .resolvedDuringReset)
            #expect(error?.description.hasPrefix("Injection: Session was resolved inside resetCurrentContainer { }") == true)
        }
    }

    @Test("a task started inside the block that resolves asynchronously while it is open gets resolvedDuringReset")
    func asyncResolveInsideBlockThrows() {
        let container = InjectionManager.currentContainer
        container.register(Session.self) { Session(user: "a") }
        let outcome = Collector<InjectionError.Kind?>()
        container.reset {
            // `Task.immediate` runs on this thread until it first suspends; the resolve decides before
            // any suspension, so the block is still open and no thread waits for the task pool.
            Task.immediate {
                do throws(InjectionError) {
                    _ = try await container.resolveAsync(Session.self)
                    outcome.append(nil)
                } catch {
                    outcome.append(error.kind)
                }
            }
        }
        #expect(outcome.values == [.resolvedDuringReset])
    }

    // The block's documentation: "Resolving from this container inside `body` fails with resolvedDuringReset:
    // the new scope does not exist until `body` returns." That holds for a task started inside the block that
    // resolves synchronously, whatever thread it runs on: one that has never used the library too.
    @Test("a task started inside the block that resolves synchronously, on a thread new to the library, gets resolvedDuringReset, not the old scope's instance")
    func syncResolveInTaskOnAFreshThreadInsideBlockThrows() async throws {
        let container = InjectionContainer()
        container.register(Marker.self) { Marker("old, was cached") }
        container.register(R2Late.self) { R2Late("old, never built before") }
        _ = try container.resolve(Marker.self)  // The old scope holds a Marker; it has never built an R2Late.
        // Each of the tasks' jobs runs on a thread started for it: the task's resolve is that thread's first.
        let executor = FreshThreadExecutor()
        let outcomes = Collector<String>()
        // On a thread of its own: the block waits for the tasks, and must not hold a thread of the pool meanwhile.
        let (tasks, resolvedInBlock) = await onOwnThread { () -> ([Task<Void, Never>], [Bool]) in
            var tasks: [Task<Void, Never>] = [], resolvedInBlock: [Bool] = []
            container.reset {
                container.register(Marker.self) { Marker("new") }
                container.register(R2Late.self) { R2Late("new") }
                // One task per type: a thread's first resolve is the one in question.
                let resolvedMarker = Gate(), resolvedLate = Gate()
                tasks.append(Task(executorPreference: executor) {
                    outcomes.append("Marker: " + outcome { () throws(InjectionError) in try container.resolve(Marker.self).label })
                    resolvedMarker.open()
                })
                tasks.append(Task(executorPreference: executor) {
                    outcomes.append("R2Late: " + outcome { () throws(InjectionError) in try container.resolve(R2Late.self).tag })
                    resolvedLate.open()
                })
                resolvedInBlock = [resolvedMarker.wait(), resolvedLate.wait()]  // Both resolve while the block is open.
            }
            return (tasks, resolvedInBlock)
        }
        for task in tasks { await task.value }
        withExtendedLifetime(executor) {}
        #expect(resolvedInBlock == [true, true], "a task did not resolve while the block was open")
        #expect(
            outcomes.values.sorted() == ["Marker: resolvedDuringReset", "R2Late: resolvedDuringReset"],
            "a synchronous resolve inside the open block, on a thread new to the library, was not refused")
    }

    @Test("unregister inside the block is applied too, and isRegistered sees it")
    func unregisterInsideBlock() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        InjectionManager.resetCurrentContainer {
            InjectionManager.unregister(Session.self)
            #expect(!InjectionManager.isRegistered(Session.self))
        }
        #expect(!InjectionManager.isRegistered(Session.self))
    }

    @Test("inside the block, a handle's change that the commit will skip does not make isRegistered say yes")
    func conditionalChangeDoesNotDecideIsRegistered() {
        let container = InjectionContainer()
        let handle = container.register(Extra.self) { Extra() }
        container.reset {
            // Recorded on condition that `handle` is still the current registration when the block commits.
            handle.postConstruction { _ in }
            // Code outside the block (another thread, with no binding) unregisters the type meanwhile.
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                container.unregister(Extra.self)
                done.signal()
            }
            done.wait()
            #expect(!container.isRegistered(Extra.self), "the block's conditional change was taken for a registration")
        }
        #expect(!container.isRegistered(Extra.self))
    }

    @Test("a task started inside the block may resolve and register once the block has committed")
    func taskOutlivingTheBlock() async throws {
        let container = InjectionContainer()
        container.register(Session.self) { Session(user: "a") }
        let gate = AsyncGate()
        var task: Task<InjectionError.Kind?, Never>?
        container.reset {
            task = Task {
                await gate.wait()  // Until the block has committed.
                container.register(Formatter.self) { Formatter() }
                do throws(InjectionError) {
                    _ = try container.resolve(Session.self)
                    _ = try await container.resolveAsync(Session.self)
                    return nil
                } catch {
                    return error.kind
                }
            }
        }
        gate.open()
        let started = try #require(task)
        let failure = await started.value
        #expect(failure == nil, "the committed block still refused the task's resolve")
        #expect(container.isRegistered(Formatter.self), "the task's registration after the commit was dropped")
    }

    @Test("a block that throws applies nothing, not even the reset")
    func throwingBlockAppliesNothing() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        let before: Session = Inject()
        #expect(throws: Abort.self) {
            try InjectionManager.resetCurrentContainer {
                InjectionManager.register(Session.self) { Session(user: "b") }
                throw Abort()
            }
        }
        #expect(Inject(Session.self) === before)
    }

    @Test("nested blocks commit once, with the outer one")
    func nestedBlocks() {
        InjectionManager.register(Session.self) { Session(user: "a") }
        InjectionManager.resetCurrentContainer {
            InjectionManager.resetCurrentContainer {
                InjectionManager.register(Session.self) { Session(user: "inner") }
                InjectionManager.register(Formatter.self) { Formatter() }
            }
            #expect(InjectionManager.isRegistered(Session.self))
            #expect(InjectionManager.isRegistered(Formatter.self), "the inner block's registration of a new type counts in the outer one")
            InjectionManager.register((any API).self) { LiveAPI() }
        }
        #expect(Inject(Session.self).user == "inner")
        #expect(InjectionManager.isRegistered((any API).self))
    }

    // LifetimesAndSessions.md: "If the block throws, nothing is applied: not the registrations, and not the
    // reset." Concurrency.md: "A reset block is atomic however it is reached: a nested block that throws
    // leaves no trace".
    @Test("a resetCurrentContainer { } that throws applies nothing, also when it runs in a task started inside another block of the same container")
    func throwingBlockInTaskStartedInsideABlockAppliesNothing() async {
        let container = InjectionContainer()
        let entered = Gate(), outerCommitted = Gate()
        let task = await runOuterBlock(of: container, afterCommit: { outerCommitted.open() }) {
            let task = Task {
                do {
                    try container.reset { () throws(R2Failure) -> Void in
                        entered.open()
                        _ = outerCommitted.wait()  // The outer block returns while this one is open.
                        container.register(R2Late.self) { R2Late("registered by a block that threw") }
                        throw R2Failure()
                    }
                } catch {}
            }
            _ = entered.wait()
            return task
        }
        await task?.value
        #expect(!container.isRegistered(R2Late.self), "the block threw, yet its registration was applied")
    }

    // LifetimesAndSessions.md: "The register and unregister calls that the block makes on the container being
    // reset are collected. When the block returns, they are applied together with the reset ... Until the
    // block returns, other threads keep resolving from the previous scope."
    @Test("other threads see a reset block's registrations only once it returns, also when it runs in a task started inside another block of the same container")
    func blockInTaskStartedInsideABlockAppliesItsRegistrationsOnlyWhenItReturns() async {
        let container = InjectionContainer()
        container.register(R2Late.self) { R2Late("before the block") }
        let entered = Gate(), outerCommitted = Gate()
        let seenWhileOpen = Collector<String>()
        let task = await runOuterBlock(of: container, afterCommit: { outerCommitted.open() }) {
            let task = Task {
                container.reset {
                    entered.open()
                    _ = outerCommitted.wait()  // The outer block returns while this one is open.
                    container.register(R2Late.self) { R2Late("registered by the block") }
                    // Another thread resolves while this block is still open.
                    let done = Gate()
                    onThread {
                        seenWhileOpen.append((try? container.resolve(R2Late.self))?.tag ?? "an error")
                        done.open()
                    }
                    _ = done.wait()
                }
            }
            _ = entered.wait()
            return task
        }
        await task?.value
        #expect(seenWhileOpen.values == ["before the block"], "another thread saw the registration of a block that had not returned")
        #expect((try? container.resolve(R2Late.self))?.tag == "registered by the block")
    }

    @Test("a block nested in a block on a thread new to the library joins it: what it registers lands with the outer block")
    func nestedBlockOnAFreshThreadJoinsTheOuterOne() {
        let container = InjectionContainer()
        let seenBetween = Collector<Bool>(), done = Gate()
        onThread {  // A thread that has never used the library: its state is made inside the outer block.
            container.reset {
                container.reset { container.register(R2Late.self) { R2Late("nested") } }
                // The nested block returned, the outer one has not: no other thread may see its registration yet.
                let checked = Gate()
                onThread {
                    seenBetween.append(container.isRegistered(R2Late.self))
                    checked.open()
                }
                _ = checked.wait()
            }
            done.open()
        }
        #expect(done.wait())
        #expect(seenBetween.values == [false], "the nested block landed before the block around it returned")
        #expect(container.isRegistered(R2Late.self))
    }
}
