import Foundation
import Injection
import Testing

// MARK: - Fixtures

/// An instance that says which factory built it: its type's name, the factory's tag, its build number.
private final class Built: Sendable {
    let type: String
    let tag: Int
    let serial: Int
    let dependencies: [Built]
    init(_ type: String, tag: Int = 0, serial: Int = 0, dependencies: [Built] = []) {
        self.type = type
        self.tag = tag
        self.serial = serial
        self.dependencies = dependencies
    }
}

private enum ResetTop: InjectionKey { typealias Value = Built }
private enum ResetMiddle: InjectionKey { typealias Value = Built }
private enum ResetBottom: InjectionKey { typealias Value = Built }
private enum ResetExtra: InjectionKey { typealias Value = Built }
private enum ResetCombo: InjectionKey { typealias Value = Built }

/// Counts builds per (type, tag) from many threads.
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

/// Registers ResetTop → ResetMiddle → ResetBottom (all scoped); ResetBottom's first build blocks until `release` opens.
private func registerChain(in container: InjectionContainer, started: Gate, release: Gate, bottomRuns: Counter) {
    container.register(ResetTop.self) { [unowned container] in
        Built("ResetTop", dependencies: [try container.resolve(ResetMiddle.self)])
    }
    container.register(ResetMiddle.self) { Built("ResetMiddle", dependencies: [try InjectionManager.resolve(ResetBottom.self)]) }
    container.register(ResetBottom.self) {
        let run = bottomRuns.increment()
        if run == 1 {
            started.open()
            release.wait()
        }
        return Built("ResetBottom", serial: run)
    }
}

@Suite("Reset correctness")
struct ResetCorrectnessTests {
    // MARK: In-flight resolves

    @Test("a resolve in flight across a reset never puts any of its nested dependencies in the new scope")
    func inFlightNestedResolveAcrossReset() throws {
        let container = InjectionContainer()
        let started = Gate(), release = Gate(), done = Gate(), bottomRuns = Counter()
        registerChain(in: container, started: started, release: release, bottomRuns: bottomRuns)
        let old = Collector<Built>()
        onThread {
            if let top = try? container.resolve(ResetTop.self) { old.append(top) }
            done.open()
        }
        #expect(started.wait())
        container.resetCurrentContainer()  // While ResetBottom, inside ResetMiddle, inside ResetTop, is being built.
        release.open()
        #expect(done.wait())
        let oldTop = try #require(old.values.first)
        let oldMiddle = oldTop.dependencies[0], oldBottom = oldMiddle.dependencies[0]
        #expect(oldBottom.serial == 1)
        // The new scope builds everything again: none of the three old instances landed in it.
        let top = try container.resolve(ResetTop.self)
        #expect(top !== oldTop)
        #expect(try container.resolve(ResetMiddle.self) !== oldMiddle)
        #expect(try container.resolve(ResetBottom.self) !== oldBottom)
        #expect(try container.resolve(ResetBottom.self).serial == 2)
        #expect(bottomRuns.value == 2)
        // And what the new scope built is consistent and cached.
        #expect(top.dependencies[0] === (try container.resolve(ResetMiddle.self)))
        #expect(try container.resolve(ResetTop.self) === top)
    }

    @Test("a resolve in flight across resetCurrentContainer { } never lands in the scope the block starts")
    func inFlightResolveAcrossTransaction() throws {
        let container = InjectionContainer()
        let started = Gate(), release = Gate(), done = Gate(), bottomRuns = Counter()
        registerChain(in: container, started: started, release: release, bottomRuns: bottomRuns)
        let old = Collector<Built>()
        onThread {
            if let top = try? container.resolve(ResetTop.self) { old.append(top) }
            done.open()
        }
        #expect(started.wait())
        container.resetCurrentContainer {
            container.register(ResetExtra.self) { Built("ResetExtra", tag: 1) }
            container.register(ResetMiddle.self) { Built("ResetMiddle", tag: 1, dependencies: [try InjectionManager.resolve(ResetBottom.self)]) }
        }
        release.open()
        #expect(done.wait())
        let oldTop = try #require(old.values.first)
        #expect(oldTop.dependencies[0].tag == 0)  // Built by the registration current when it started.
        let top = try container.resolve(ResetTop.self)
        #expect(top !== oldTop)
        #expect(top.dependencies[0].tag == 1)
        #expect(top.dependencies[0].dependencies[0] !== oldTop.dependencies[0].dependencies[0])
        #expect(try container.resolve(ResetExtra.self).tag == 1)
    }

    @Test("a singleton built across a reset is kept, but its scoped dependency stays in the old scope")
    func singletonAcrossResetKeepsOnlyItself() throws {
        let container = InjectionContainer()
        let started = Gate(), release = Gate(), done = Gate(), bottomRuns = Counter()
        registerChain(in: container, started: started, release: release, bottomRuns: bottomRuns)
        container.register(ResetTop.self, lifetime: .singleton) { Built("ResetTop", dependencies: [try InjectionManager.resolve(ResetBottom.self)]) }
        let old = Collector<Built>()
        onThread {
            if let top = try? container.resolve(ResetTop.self) { old.append(top) }
            done.open()
        }
        #expect(started.wait())
        container.resetCurrentContainer()
        release.open()
        #expect(done.wait())
        let singleton = try #require(old.values.first)
        #expect(try container.resolve(ResetTop.self) === singleton)  // Singletons ignore scopes.
        let oldBottom = singleton.dependencies[0]
        #expect(try container.resolve(ResetBottom.self) !== oldBottom)  // The scoped one did not leak into the new scope.
        #expect(bottomRuns.value == 2)
    }

    // MARK: Atomicity

    @Test("observers never see old and new registrations mixed by resetCurrentContainer { } of several types")
    func transactionOfSeveralTypesIsAtomic() {
        let container = InjectionContainer()
        let log = BuildLog()
        // Commits begun/ended, written by this thread only, read by observers.
        let begun = Counter(), ended = Counter()
        func register(tag: Int) {
            // In the order ResetCombo resolves them: applying them one by one would show as P > Q or Q > R.
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
        let finishedObserving = Collector<Int>()
        for index in 0..<observers {
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
            }
        }
        for tag in 1...commits {
            begun.increment()
            container.resetCurrentContainer { register(tag: tag) }
            ended.increment()
            Thread.sleep(forTimeInterval: 0.000_2)
        }
        stop.open()
        let deadline = Date(timeIntervalSinceNow: 10)
        while finishedObserving.values.count < observers && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        #expect(finishedObserving.values.count == observers)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(10))")
        // A non-atomic commit would let a resolve that overlapped no commit rebuild a registration.
        #expect(log.repeated.isEmpty, "built more than once per registration: \(log.repeated)")
        // The observers really did watch the commits happen.
        #expect(observed.value > commits)
        #expect(Set(tagsSeen.values).count > 10)
    }
}
