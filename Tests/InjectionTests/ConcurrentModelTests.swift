import Foundation
import Injection
import Testing

// A concurrent model-based test: several threads run random operations (register, resolve, unregister,
// reset, reset with a block, withContainer) against one container holding a small acyclic graph, and
// every outcome is checked against what some serial order of the same operations could have produced:
// a resolved instance is of the requested type and was built with exactly that type's dependencies; a
// failure is `notRegistered` for a type some operation did unregister (never a cycle, never anything else).
// Between rounds of chaos, a quiet phase checks exactly-once: every thread resolves every type at once,
// and each scoped type is built once and shared.
//
// `INJECTION_SEED` replays a run; a failure names its seed.

/// Type number `Index` (one of `D0`...`D7`) of the model graph.
private enum RacedNode<Index>: InjectionKey { typealias Value = RacedInstance }

private final class RacedInstance: Sendable {
    let type: Int
    let generation: Int
    let dependencies: [RacedInstance]
    init(type: Int, generation: Int, dependencies: [RacedInstance]) {
        self.type = type
        self.generation = generation
        self.dependencies = dependencies
    }
}

/// One type of the model graph: registers, resolves and unregisters it.
private struct RacedType: Sendable {
    let name: String
    let register: @Sendable (InjectionContainer, InjectionLifetime, @escaping @Sendable () throws -> RacedInstance) -> Void
    let resolve: @Sendable (InjectionContainer) throws(InjectionError) -> RacedInstance
    let resolveBound: @Sendable () throws(InjectionError) -> RacedInstance
    let unregister: @Sendable (InjectionContainer) -> Void

    static func of<Index>(_: Index.Type) -> RacedType {
        typealias Key = RacedNode<Index>
        return RacedType(
            name: String(describing: Key.self),
            register: { container, lifetime, factory in container.register(Key.self, lifetime: lifetime, factory: factory) },
            resolve: { container throws(InjectionError) in try container.resolve(Key.self) },
            resolveBound: { () throws(InjectionError) in try InjectionManager.resolve(Key.self) },
            unregister: { container in container.unregister(Key.self) })
    }

    static let all: [RacedType] = [.of(D0.self), .of(D1.self), .of(D2.self), .of(D3.self), .of(D4.self), .of(D5.self), .of(D6.self), .of(D7.self)]
}

/// What the threads share: the graph, each type's registration generation, which types went missing, and
/// the builds of the quiet phase.
private final class RacedWorld: @unchecked Sendable {
    let graph: [[Int]]
    private let lock = NSLock()
    private var generations: [Int]
    private var missing: Set<Int> = []
    private var quietBuilds: [Int: Int] = [:]
    private var isQuiet = false
    private(set) var violations: [String] = []

    init(graph: [[Int]]) {
        self.graph = graph
        generations = Array(repeating: 0, count: graph.count)
    }

    func nextGeneration(of type: Int) -> Int { lock.withLock { generations[type] += 1; return generations[type] } }
    func markMissing(_ type: Int) { lock.withLock { _ = missing.insert(type) } }
    func wasMissing(_ name: String) -> Bool {
        lock.withLock { missing.contains { RacedType.all[$0].name == name } }
    }
    func startQuiet() { lock.withLock { isQuiet = true; quietBuilds = [:]; missing = [] } }
    func endQuiet() -> [Int: Int] { lock.withLock { isQuiet = false; return quietBuilds } }
    func noteBuild(of type: Int) { lock.withLock { if isQuiet { quietBuilds[type, default: 0] += 1 } } }
    func violation(_ text: String) { lock.withLock { violations.append(text) } }

    /// Registers `type` with a factory that resolves its dependencies from the container running it.
    func register(_ type: Int, lifetime: InjectionLifetime, in container: InjectionContainer) {
        let generation = nextGeneration(of: type)
        let dependencies = graph[type]
        RacedType.all[type].register(container, lifetime) { [self] in
            noteBuild(of: type)
            let built = try dependencies.map { dependency throws(InjectionError) in try RacedType.all[dependency].resolveBound() }
            return RacedInstance(type: type, generation: generation, dependencies: built)
        }
    }

    /// Checks one resolve's outcome against the model.
    func check(_ outcome: Result<RacedInstance, InjectionError>, requested type: Int, by operation: String) {
        switch outcome {
        case .success(let instance):
            if instance.type != type || instance.dependencies.map(\.type) != graph[type] {
                violation("\(operation): got type \(instance.type) with \(instance.dependencies.map(\.type)), expected \(type) with \(graph[type])")
            }
        case .failure(let error):
            if error.kind != .notRegistered || !wasMissing(error.typeName) {
                violation("\(operation): \(error.kind) for \(error.typeName), which no operation unregistered: \(error)")
            }
        }
    }
}

@Suite("Concurrent model")
struct ConcurrentModelTests {
    static let fixedSeed: UInt64 = 0x1DEA_5EED_0000_0014

    @Test("threads racing random operations on an acyclic graph get only outcomes a serial order could give (fixed seed)")
    func fixedSeedRun() {
        run(seed: SeededRandom.seed(fromEnvironment: "INJECTION_SEED") ?? Self.fixedSeed)
    }

    @Test("threads racing random operations on an acyclic graph get only outcomes a serial order could give (random seed)")
    func randomSeedRun() {
        run(seed: SeededRandom.seed(fromEnvironment: "INJECTION_SEED") ?? UInt64.random(in: 0...UInt64.max))
    }

    private func run(seed: UInt64, threads: Int = 4, rounds: Int = 12, operationsPerRound: Int = 150) {
        var random = SeededRandom(seed: seed)
        let typeCount = RacedType.all.count
        let graph = (0..<typeCount).map { type in (0..<type).filter { _ in random.chance(0.4) } }
        let world = RacedWorld(graph: graph)
        let container = InjectionContainer()
        for type in 0..<typeCount { world.register(type, lifetime: .scoped, in: container) }
        let barrier = Barrier(count: threads)
        let sightings = Sightings()
        let lifetimes: [InjectionLifetime] = [.scoped, .singleton, .transient]
        let threadSeeds = (0..<threads).map { _ in random.next() }

        let finished = runOnThreads(threads, timeout: 300) { thread in
            var random = SeededRandom(seed: threadSeeds[thread])
            for round in 0..<rounds {
                // Chaos: every operation, on every thread, at once.
                for _ in 0..<operationsPerRound {
                    let type = random.int(below: typeCount)
                    switch random.int(below: 20) {
                    case 0..<7:
                        world.check(Result { () throws(InjectionError) in try RacedType.all[type].resolve(container) }, requested: type, by: "resolve(\(type))")
                    case 7..<10:
                        let outcome = InjectionManager.withContainer(container) {
                            Result { () throws(InjectionError) in try RacedType.all[type].resolveBound() }
                        }
                        world.check(outcome, requested: type, by: "withContainer { resolve(\(type)) }")
                    case 10..<13:
                        world.register(type, lifetime: random.pick(lifetimes), in: container)
                    case 13..<15:
                        world.markMissing(type)
                        RacedType.all[type].unregister(container)
                    case 15..<17:
                        container.resetCurrentContainer()
                    case 17..<19:
                        let lifetime = random.pick(lifetimes)
                        container.resetCurrentContainer { world.register(type, lifetime: lifetime, in: container) }
                    default:
                        _ = RacedType.all[type].name.isEmpty || container.isRegistered(RacedNode<D0>.self)
                    }
                }
                // Quiet: one thread re-registers everything as scoped; then all resolve every type at once.
                guard barrier.arrive() else { return }
                if thread == 0 {
                    world.startQuiet()
                    container.resetCurrentContainer {
                        for type in 0..<typeCount { world.register(type, lifetime: .scoped, in: container) }
                    }
                }
                guard barrier.arrive() else { return }
                var seen: [ObjectIdentifier] = []
                for type in (0..<typeCount).shuffled(using: &random) {
                    let outcome = Result { () throws(InjectionError) in try RacedType.all[type].resolve(container) }
                    world.check(outcome, requested: type, by: "quiet resolve(\(type))")
                    if case .success(let instance) = outcome { seen.append(ObjectIdentifier(instance)) }
                }
                sightings.record(round: round, thread: thread, instances: Set(seen))
                guard barrier.arrive() else { return }
                if thread == 0 {
                    let builds = world.endQuiet()
                    if let twice = builds.first(where: { $0.value != 1 }) {
                        world.violation("round \(round): type \(twice.key) was built \(twice.value) times in the quiet phase")
                    }
                    if builds.count != typeCount { world.violation("round \(round): \(builds.count) of \(typeCount) types built") }
                    if !sightings.allAgree(round: round, threads: threads) {
                        world.violation("round \(round): threads got different instances of a scoped type")
                    }
                }
                guard barrier.arrive() else { return }
            }
        }
        #expect(finished, "seed \(seed): a thread never arrived (a deadlock?)")
        #expect(world.violations.isEmpty, "seed \(seed) (replay with INJECTION_SEED=\(seed)): \(world.violations.prefix(5))")
    }
}

/// The instances each thread got in each quiet phase.
private final class Sightings: @unchecked Sendable {
    private let lock = NSLock()
    private var byRound: [Int: [Set<ObjectIdentifier>]] = [:]
    func record(round: Int, thread: Int, instances: Set<ObjectIdentifier>) {
        lock.withLock { byRound[round, default: []].append(instances) }
    }
    func allAgree(round: Int, threads: Int) -> Bool {
        lock.withLock {
            guard let sets = byRound[round], sets.count == threads else { return false }
            return Set(sets).count == 1
        }
    }
}

