@_spi(Testing) import InjectionTesting
import Testing

// The container's state machine, event by event, with no thread: each test writes out one interleaving
// of resolves, builds and resets that the concurrent tests can only hit by chance.

private final class Service {}
private final class Other {}
private final class Third {}

@Suite("Container state machine")
struct ContainerStateMachineTests {
    @Test("claiming an unregistered type fails with notRegistered")
    func unregistered() {
        var machine = InjectionProbe.StateMachine()
        #expect(machine.claim(Service.self) == .notRegistered)
    }

    @Test("the first claim builds, a second claim waits, and after completion both find the instance")
    func buildThenWaitThenCached() throws {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped)
        guard case .build(let build?) = machine.claim(Service.self) else { Issue.record("no build"); return }
        #expect(machine.claim(Service.self) == .wait)
        #expect(machine.isBuilding(build))
        let completion = machine.complete(Service.self, build: build)
        #expect(completion.cached)
        #expect(completion.wakes, "a claim waited, so completing wakes it")
        #expect(!machine.isBuilding(build))
        #expect(machine.claim(Service.self) == .cached)
    }

    @Test("completing a build nobody waited for wakes no one")
    func noWaitersNoWake() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped)
        guard case .build(let build?) = machine.claim(Service.self) else { Issue.record("no build"); return }
        #expect(machine.complete(Service.self, build: build) == (cached: true, wakes: false))
    }

    @Test("a failed build caches nothing and the next claim builds again")
    func failedBuild() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped)
        guard case .build(let build?) = machine.claim(Service.self) else { Issue.record("no build"); return }
        #expect(!machine.complete(Service.self, build: build, succeeding: false).cached)
        guard case .build(let again?) = machine.claim(Service.self) else { Issue.record("no second build"); return }
        #expect(again != build)
    }

    @Test("a scoped build that started before a reset is not cached, and its waiters are woken")
    func buildAcrossReset() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped)
        guard case .build(let build?) = machine.claim(Service.self) else { Issue.record("no build"); return }
        #expect(machine.claim(Service.self) == .wait)
        let changes = machine.reset()
        #expect(changes.abandoned == 1, "the build had a waiter")
        #expect(machine.epoch == 1)
        #expect(!machine.isBuilding(build), "waiters stop waiting for an abandoned build")
        // The reset handed its waiters back to be woken (`abandoned` above); finishing it wakes no one again.
        #expect(machine.complete(Service.self, build: build) == (cached: false, wakes: false))
        guard case .build(let fresh?) = machine.claim(Service.self) else { Issue.record("the new epoch must build anew"); return }
        #expect(machine.complete(Service.self, build: fresh).cached)
    }

    @Test("a nested build of a resolution that started before a reset is not cached either")
    func nestedBuildKeepsItsResolutionsEpoch() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped)
        _ = machine.reset()
        // The resolution that asks started in epoch 0; the container is in epoch 1.
        guard case .build(let build?) = machine.claim(Service.self, inheritedEpoch: 0) else { Issue.record("no build"); return }
        #expect(!machine.complete(Service.self, build: build).cached)
    }

    @Test("a singleton build survives a reset and its instance survives the next one")
    func singletonAcrossReset() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .singleton)
        guard case .build(let build?) = machine.claim(Service.self) else { Issue.record("no build"); return }
        _ = machine.reset()
        #expect(machine.complete(Service.self, build: build).cached)
        #expect(machine.reset().evicted == 0)
        #expect(machine.claim(Service.self) == .cached)
    }

    @Test("a build of a registration replaced meanwhile caches nothing")
    func replacedWhileBuilding() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped)
        guard case .build(let build?) = machine.claim(Service.self) else { Issue.record("no build"); return }
        machine.register(Service.self, lifetime: .scoped)
        #expect(!machine.complete(Service.self, build: build).cached)
        guard case .build = machine.claim(Service.self) else { Issue.record("the new registration must build"); return }
    }

    @Test("a reset visits only what the epoch used, and unregistering takes a key off its list")
    func resetVisitsOnlyWhatWasUsed() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped)
        machine.register(Other.self, lifetime: .scoped)
        machine.register(Third.self, lifetime: .singleton)
        for type in [Service.self, Other.self, Third.self] as [Any.Type] {
            guard case .build(let build?) = machine.claim(type) else { Issue.record("no build"); return }
            _ = machine.complete(type, build: build)
        }
        #expect(machine.resettableCount == 2, "singletons are never listed")
        #expect(machine.unregister(Other.self).evicted == 1)
        #expect(machine.resettableCount == 1)
        #expect(machine.reset() == .init(evicted: 1, abandoned: 0))
        #expect(machine.resettableCount == 0)
    }

    @Test("a transient never makes a build, caches nothing, and a reset never visits it")
    func transient() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .transient)
        #expect(machine.claim(Service.self) == .build(nil))
        #expect(machine.claim(Service.self) == .build(nil), "nobody waits for a transient: a second claim builds too")
        #expect(machine.complete(Service.self, build: nil) == (cached: false, wakes: false))
        #expect(machine.claim(Service.self) == .build(nil))
        #expect(machine.resettableCount == 0)
        #expect(machine.reset() == .init(evicted: 0, abandoned: 0))
    }

    @Test("a cycle is reported only when the instance is not there to take")
    func cycle() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped)
        #expect(machine.claim(Service.self, isInChain: true) == .cycle)
        guard case .build(let build?) = machine.claim(Service.self) else { Issue.record("no build"); return }
        _ = machine.complete(Service.self, build: build)
        #expect(machine.claim(Service.self, isInChain: true) == .cached)
    }

    @Test("main-actor factories: a synchronous claim off the main actor fails, an async one hops, the main actor builds")
    func mainActor() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped, isolation: .mainActor)
        #expect(machine.claim(Service.self) == .wrongIsolation)
        #expect(machine.claim(Service.self, isAsync: true) == .hop)
        guard case .build(_?) = machine.claim(Service.self, onMainActor: true) else { Issue.record("no build"); return }
    }

    @Test("async factories: a synchronous claim fails with asyncFactory, an async one builds")
    func asyncFactory() {
        var machine = InjectionProbe.StateMachine()
        machine.register(Service.self, lifetime: .scoped, isolation: .async)
        #expect(machine.claim(Service.self) == .asyncFactory)
        guard case .build(_?) = machine.claim(Service.self, isAsync: true) else { Issue.record("no build"); return }
        #expect(machine.claim(Service.self) == .asyncFactory, "a synchronous resolve never waits for async work")
    }
}

@Suite("Container state machine: the registration table")
struct RegistrationTableTests {
    /// `count` distinct types: `Int`, `Int?`, `Int??`, …
    private static func distinctTypes(_ count: Int) -> [Any.Type] {
        func wrapped<T>(_: T.Type) -> Any.Type { T?.self }
        var types: [Any.Type] = [Int.self]
        while types.count < count { types.append(_openExistential(types.last!, do: wrapped)) }
        return types
    }

    @Test("registers, replaces and unregisters 400 types in a random order, as a dictionary would")
    func matchesADictionary() {
        var machine = InjectionProbe.StateMachine()
        var model: [Int: ObjectIdentifier] = [:]  // Each registered type's latest registration.
        var random = SeededRandom(seed: 0x5EED_0015)
        let types = Self.distinctTypes(400)
        var snapshot: (machine: InjectionProbe.StateMachine, model: [Int: ObjectIdentifier])?
        for step in 0..<6_000 {
            if step == 3_000 { snapshot = (machine, model) }  // A copy keeps its registrations while the original changes.
            let index = Int.random(in: 0..<types.count, using: &random)
            if Bool.random(using: &random) || model.count < 50 {
                let changes = machine.register(types[index], lifetime: .transient)
                #expect(changes.evicted == 0)
                model[index] = machine.lastRegistered
            } else {
                _ = machine.unregister(types[index])
                model[index] = nil
            }
            if step % 500 == 0 || step == 5_999 {
                // Every type answers as the model says: with its latest registration, which builds (a
                // transient), or not at all.
                for (checked, type) in types.enumerated() {
                    #expect(machine.registration(of: type) == model[checked], "type \(checked) at step \(step)")
                    #expect((machine.claim(type) != .notRegistered) == (model[checked] != nil), "type \(checked) at step \(step)")
                }
            }
        }
        #expect(machine.registrationCount == model.count)
        if let snapshot {
            var copy = snapshot.machine
            #expect(copy.registrationCount == snapshot.model.count)
            for (checked, type) in types.enumerated() {
                #expect(copy.registration(of: type) == snapshot.model[checked], "type \(checked) in the copy")
                #expect((copy.claim(type) != .notRegistered) == (snapshot.model[checked] != nil), "type \(checked) in the copy")
            }
        }
        for index in model.keys { _ = machine.unregister(types[index]) }
        #expect(machine.registrationCount == 0)
        #expect(types.allSatisfy { machine.claim($0) == .notRegistered })
    }

    @Test("a table grown to 3,000 types and emptied but for a few, in a random order, keeps the rest findable and takes new ones")
    func growThenEmpty() {
        // Several doublings, then removals that empty runs from their middle: each shifts entries back.
        var machine = InjectionProbe.StateMachine()
        let types = Self.distinctTypes(3_000)
        var expected: [ObjectIdentifier?] = types.map { type in
            _ = machine.register(type, lifetime: .transient)
            return machine.lastRegistered
        }
        var random = SeededRandom(seed: 0x5EED_3000)
        for (step, index) in types.indices.shuffled(using: &random).enumerated() where index % 17 != 0 {
            _ = machine.unregister(types[index])
            expected[index] = nil
            if step % 97 == 0 {
                let wrong = types.indices.filter { machine.registration(of: types[$0]) != expected[$0] }
                #expect(wrong.isEmpty, "after \(step) removals, \(wrong.count) types answer wrongly, type \(wrong.first ?? -1) first")
            }
        }
        #expect(machine.registrationCount == expected.compactMap { $0 }.count)
        for index in types.indices where index % 3 == 0 {  // Into the emptied table.
            _ = machine.register(types[index], lifetime: .transient)
            expected[index] = machine.lastRegistered
        }
        let wrong = types.indices.filter { machine.registration(of: types[$0]) != expected[$0] }
        #expect(wrong.isEmpty, "\(wrong.count) types answer wrongly after registering again")
        #expect(machine.registrationCount == expected.compactMap { $0 }.count)
    }

    @Test("a type, the same type as a key and as a builder are three registrations, each answering for itself")
    func rolesOfOneTypeAreThreeKeys() throws {
        // Their keys differ in flag bits alone (the type's metadata is the same): the table tells them apart.
        let container = InjectionContainer()
        registerAsType(container) { ThreeRoles(1) }
        container.register(ThreeRoles.self) { () -> Int in 2 }  // As an `InjectionKey`.
        container.register(ThreeRoles.self) { (_: ThreeRoles) in 3 }  // As a `Builder`.
        #expect(try resolveAsType(container).number == 1)
        #expect(try container.resolve(ThreeRoles.self) as Int == 2)
        #expect(try container.build(ThreeRoles(0)) == 3)

        container.unregister(ThreeRoles.self) as Void  // The key.
        #expect(try resolveAsType(container).number == 1)
        #expect(throws: InjectionError.self) { try container.resolve(ThreeRoles.self) as Int }
        #expect(try container.build(ThreeRoles(0)) == 3)

        unregisterAsType(container)
        container.register(ThreeRoles.self) { () -> Int in 4 }
        #expect(throws: InjectionError.self) { try resolveAsType(container) }
        #expect(try container.resolve(ThreeRoles.self) as Int == 4)
        #expect(try container.build(ThreeRoles(0)) == 3)

        container.unregister(builder: ThreeRoles.self)
        #expect(throws: InjectionError.self) { try container.build(ThreeRoles(0)) }
        #expect(try container.resolve(ThreeRoles.self) as Int == 4)
    }
}

/// One type registered three ways: as itself, as an `InjectionKey` and as a `Builder`.
private final class ThreeRoles: InjectionKey, Builder, Sendable {
    typealias Value = Int
    typealias BuildResult = Int
    let number: Int
    init(_ number: Int) { self.number = number }
}

// Unconstrained, so the calls below pick the overloads for a type, not those for a key.
private func registerAsType<Value>(_ container: InjectionContainer, _ factory: @escaping @Sendable () -> Value) {
    container.register(Value.self, factory: factory)
}
private func resolveAsType(_ container: InjectionContainer) throws -> ThreeRoles { try resolveType(container, ThreeRoles.self) }
private func resolveType<Value>(_ container: InjectionContainer, _ type: Value.Type) throws -> Value { try container.resolve(type) }
private func unregisterAsType(_ container: InjectionContainer) { unregisterType(container, ThreeRoles.self) }
private func unregisterType<Value>(_ container: InjectionContainer, _ type: Value.Type) { container.unregister(type) }
