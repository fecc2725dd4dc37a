import Foundation
@_spi(Testing) import InjectionTesting
import InjectionTesting
import Testing

// A resolution belongs to the scope it started in: a resolve in flight across a reset (or a
// `resetCurrentContainer { }` commit) hands what it builds, nested dependencies included, to its own caller,
// and never caches any of it in the new scope, which builds its own. Async constructions likewise.

private enum ResetExtra: InjectionKey { typealias Value = Built }

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

private final class SlowPart: Sendable {}
private final class WeakCell: @unchecked Sendable {  // Written before `done` opens, read after.
    weak var object: AnyObject?
}

@Suite("In flight across a reset")
struct InFlightAcrossResetTests {
    @Test("a build whose registration is replaced while it runs caches nothing: the old registration and its instance go")
    func replacedWhileBuildingCachesNothing() throws {
        let container = InjectionContainer()
        let started = Gate(), release = Gate(), done = Gate()
        container.register(SlowPart.self) {
            started.open()
            release.wait()
            return SlowPart()
        }
        let oldRegistration = WeakCell(), built = WeakCell()
        oldRegistration.object = InjectionProbe.registration(for: SlowPart.self, in: container)
        onThread {
            built.object = try? container.resolve(SlowPart.self)  // Handed to its caller, who drops it.
            done.open()
        }
        #expect(started.wait())
        let newRuns = Counter()
        container.register(SlowPart.self) { newRuns.increment(); return SlowPart() }
        release.open()
        #expect(done.wait())
        #expect(built.object == nil, "the replaced registration's build was cached")
        #expect(oldRegistration.object == nil, "something still holds the replaced registration")
        let current = try container.resolve(SlowPart.self)
        #expect(newRuns.value == 1, "the new registration's first resolve did not build")
        #expect(try container.resolve(SlowPart.self) === current, "the new registration's instance is cached")
        #expect(newRuns.value == 1)
    }

    @Test("a resolve in flight across a reset never puts its instance in the new scope")
    func inFlightResolveAcrossReset() throws {
        let container = InjectionContainer()
        let release = Gate(), started = Gate(), done = Gate()
        let serial = Counter()
        container.register(Session.self) {
            let number = serial.increment()
            if number == 1 {
                started.open()
                release.wait()
            }
            return Session(user: "u", serial: number)
        }
        let oldSession = Collector<Session>()
        onThread {
            oldSession.append(try! container.resolve(Session.self))
            done.open()
        }
        #expect(started.wait())
        container.reset()
        release.open()
        #expect(done.wait())
        // The in-flight caller got the old-scope instance; the new scope builds its own.
        #expect(oldSession.values.map(\.serial) == [1])
        let newSession = try container.resolve(Session.self)
        #expect(newSession.serial == 2)
        #expect(try container.resolve(Session.self) === newSession)
    }

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
        container.reset()  // While ResetBottom, inside ResetMiddle, inside ResetTop, is being built.
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
        container.reset {
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
        container.reset()
        release.open()
        #expect(done.wait())
        let singleton = try #require(old.values.first)
        #expect(try container.resolve(ResetTop.self) === singleton)  // Singletons ignore scopes.
        let oldBottom = singleton.dependencies[0]
        #expect(try container.resolve(ResetBottom.self) !== oldBottom)  // The scoped one did not leak into the new scope.
        #expect(bottomRuns.value == 2)
    }

    @Test("an async construction in flight across a reset never lands in the new scope", .isolatedInjection)
    func resetDuringAsyncConstruction() async throws {
        let runs = Counter()
        let gate = AsyncGate()
        InjectionManager.registerAsync((any AsyncStore).self) {
            let serial = runs.increment()
            if serial == 1 { await gate.wait() }
            return LiveAsyncStore(serial: serial)
        }
        let container = InjectionManager.currentContainer
        let inFlight = Task { try await container.resolveAsync((any AsyncStore).self) }
        #expect(await gate.started())
        container.reset()
        gate.open()
        #expect(try await inFlight.value.serial == 1)  // Its caller gets it...
        let next = try await InjectionManager.resolveAsync((any AsyncStore).self)
        #expect(next.serial == 2)                      // ...but the new scope builds its own.
        #expect(try await InjectionManager.resolveAsync((any AsyncStore).self) === next)
    }

    @Test("a resolution that began before a reset never caches what it builds after the reset", .isolatedInjection)
    func staleResolutionDoesNotSeedTheNewScope() throws {
        let (old, current) = try partsAcrossAScopeEnd { $0.reset() }
        #expect(old !== current, "the old resolution's Part was cached in the new scope")
    }

    @Test("a resolution that began before removeAll() never caches what it builds in the types registered after it")
    func staleResolutionDoesNotSeedTheReregistration() throws {
        let (old, current) = try partsAcrossAScopeEnd { container in
            container.removeAll()
            container.register(Part.self) { Part(deinits: Counter()) }
        }
        #expect(old !== current, "the old resolution's Part was cached in the new registration")
    }

    /// The Part a resolution of Holder that began before `endScope` resolved after it, and the Part the
    /// container gives once that resolution is done.
    private func partsAcrossAScopeEnd(_ endScope: (InjectionContainer) -> Void) throws -> (old: Part, current: Part) {
        let container = InjectionContainer()
        let proceed = Latch(), started = Latch()
        container.register(Part.self) { Part(deinits: Counter()) }
        container.register(Holder.self) {
            started.open()
            proceed.wait()
            return Holder(part: try InjectionManager.resolve(Part.self))  // Resolved after the scope ended.
        }
        let old = Collector<Holder>()
        let finished = Gate()
        onThread { old.append(try! container.resolve(Holder.self)); finished.open() }
        #expect(started.wait())
        endScope(container)
        proceed.open()
        #expect(finished.wait())
        let oldPart = try #require(old.values.first?.part)
        return (oldPart, try container.resolve(Part.self))
    }
}
