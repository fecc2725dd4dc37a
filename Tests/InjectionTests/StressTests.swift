import Foundation
import Injection
import Testing

// Stress: threads (and tasks) doing random mixes of resolve, register, unregister, reset and
// `resetCurrentContainer { }` on a graph of 50 types with every lifetime, checking invariants as they
// go. Bounded by time, not by a count, so the suite takes the same few seconds in debug and under
// ThreadSanitizer; the counts achieved are printed.

// MARK: - The graph

enum D0 {}
enum D1 {}
enum D2 {}
enum D3 {}
enum D4 {}
enum D5 {}
enum D6 {}
enum D7 {}
enum D8 {}
enum D9 {}

/// Type number `10 * Tens + Ones` of the stress graph: a typed key, so 10 markers name 50 types.
enum StressKey<Tens, Ones>: InjectionKey { typealias Value = StressInstance }

/// An instance built by a stress factory, carrying what the invariants need.
final class StressInstance: Sendable {
    let type: Int
    /// The generation of the registration whose factory built it (bumped by every register/unregister).
    let generation: Int
    let lifetime: InjectionLifetime
    /// How many resets had begun when its factory started.
    let resetsBegunAtStart: Int
    /// The quiescent round it was built in, or 0 if built during the chaos.
    let round: Int
    let dependencies: [StressInstance]

    init(type: Int, generation: Int, lifetime: InjectionLifetime, resetsBegunAtStart: Int, round: Int, dependencies: [StressInstance]) {
        self.type = type
        self.generation = generation
        self.lifetime = lifetime
        self.resetsBegunAtStart = resetsBegunAtStart
        self.round = round
        self.dependencies = dependencies
    }
}

/// Registers, resolves and unregisters one type of the stress graph, on a container or on
/// `InjectionManager` (the task's bound container).
struct StressType: Sendable {
    let register: @Sendable (InjectionContainer?, InjectionLifetime, @escaping @Sendable () throws -> StressInstance) -> Void
    let resolve: @Sendable (InjectionContainer?) throws(InjectionError) -> StressInstance
    let unregister: @Sendable (InjectionContainer?) -> Void

    static func of<Tens, Ones>(_: Tens.Type, _: Ones.Type) -> StressType {
        typealias Key = StressKey<Tens, Ones>
        return StressType(
            register: { container, lifetime, factory in
                if let container {
                    container.register(Key.self, lifetime: lifetime, factory: factory)
                } else {
                    InjectionManager.register(Key.self, lifetime: lifetime, factory: factory)
                }
            },
            resolve: { (container: InjectionContainer?) throws(InjectionError) -> StressInstance in
                if let container { return try container.resolve(Key.self) }
                return try InjectionManager.resolve(Key.self)
            },
            unregister: { container in
                if let container { container.unregister(Key.self) } else { InjectionManager.unregister(Key.self) }
            })
    }

    private static func row<Tens>(_ tens: Tens.Type) -> [StressType] {
        [of(tens, D0.self), of(tens, D1.self), of(tens, D2.self), of(tens, D3.self), of(tens, D4.self),
         of(tens, D5.self), of(tens, D6.self), of(tens, D7.self), of(tens, D8.self), of(tens, D9.self)]
    }

    /// 50 types in 5 layers of 10; a type depends only on types of the next two layers, so the
    /// graph is acyclic and a resolve builds a bounded number of transients.
    static let all: [StressType] = row(D0.self) + row(D1.self) + row(D2.self) + row(D3.self) + row(D4.self)
}

// MARK: - Shared state and invariants

/// Operation counts of one thread or task, summed at the end.
struct StressCounts {
    var resolves = 0, missing = 0, registers = 0, unregisters = 0, resets = 0, transactions = 0
    var pairChecks = 0, rounds = 0, roundResolves = 0

    /// Whether one of 8 threads did its share of what `threadsKeepInvariants` requires of the whole run.
    var isThreadShare: Bool { pairChecks >= 13 && resets >= 2 && transactions >= 2 && registers >= 2 }

    static func + (lhs: StressCounts, rhs: StressCounts) -> StressCounts {
        StressCounts(
            resolves: lhs.resolves + rhs.resolves, missing: lhs.missing + rhs.missing,
            registers: lhs.registers + rhs.registers, unregisters: lhs.unregisters + rhs.unregisters,
            resets: lhs.resets + rhs.resets, transactions: lhs.transactions + rhs.transactions,
            pairChecks: lhs.pairChecks + rhs.pairChecks, rounds: lhs.rounds + rhs.rounds,
            roundResolves: lhs.roundResolves + rhs.roundResolves)
    }
}

/// The container under test plus what the test knows about it, each piece behind its own lock.
///
/// Lock order: `resetLock` → the types' locks in ascending order → leaf locks (`counterLock`, `buildLock`,
/// `reportLock`). No test lock is held while a factory runs on the same thread.
final class StressWorld: @unchecked Sendable {
    static let typeCount = 50
    let container: InjectionContainer
    /// `nil`: act through `InjectionManager` (the bound container) instead of `container`.
    let target: InjectionContainer?
    let dependencies: [[Int]]
    let lifetimes: [InjectionLifetime] = [.scoped, .singleton, .transient, .weak]

    /// What the test knows of one type, guarded by `lock`, which is held across the container call
    /// that changes the type.
    private final class TypeState: @unchecked Sendable {
        let lock = NSLock()
        var generation = 0
        var isRegistered = false
        var lifetime = InjectionLifetime.scoped
    }

    private let types = (0..<typeCount).map { _ in TypeState() }

    // Resets are serialized by `resetLock`; the counters are read under `counterLock`.
    private let resetLock = NSLock()
    private let counterLock = NSLock()
    private var resetsBegun = 0, resetsEnded = 0

    // Quiescent rounds: builds per type while a round is on; guarded by `buildLock`.
    private let buildLock = NSLock()
    private var round = 0, roundIsOn = false
    private var roundBuilds = [Int](repeating: 0, count: typeCount)
    private var roundResults: [[StressInstance?]] = []

    private let reportLock = NSLock()
    private var violationList: [String] = []
    private var totals = StressCounts()

    init(seed: UInt64, boundToTask: Bool) {
        container = InjectionContainer()
        container.diagnosticsHandler = { _ in }  // It re-registers on purpose while cached instances depend on the type.
        target = boundToTask ? nil : container
        var random = SeededRandom(seed: seed)
        dependencies = (0..<Self.typeCount).map { type in
            let layer = type / 10
            guard layer < 4 else { return [] }
            let candidates = Array(((layer + 1) * 10)..<min(Self.typeCount, (layer + 3) * 10))
            return (0..<random.int(in: 0...3)).map { _ in random.pick(candidates) }
        }
    }

    // MARK: Reporting

    func violation(_ message: String) {
        reportLock.withLock { if violationList.count < 30 { violationList.append(message) } }
    }

    var violations: [String] { reportLock.withLock { violationList } }
    func add(_ counts: StressCounts) { reportLock.withLock { totals = totals + counts } }
    var counts: StressCounts { reportLock.withLock { totals } }

    // MARK: Snapshots

    /// The type's generation and whether it is registered; waits for a register in flight.
    func registration(of type: Int) -> (generation: Int, isRegistered: Bool, lifetime: InjectionLifetime) {
        let state = types[type]
        return state.lock.withLock { (state.generation, state.isRegistered, state.lifetime) }
    }

    /// (resets begun, resets ended).
    var resets: (begun: Int, ended: Int) { counterLock.withLock { (resetsBegun, resetsEnded) } }

    // MARK: Operations

    private func factory(type: Int, generation: Int, lifetime: InjectionLifetime) -> @Sendable () throws -> StressInstance {
        { [unowned self] in
            let resetsBegunAtStart = resets.begun
            var built: [StressInstance] = []
            for (index, dependency) in dependencies[type].enumerated() {
                // Half through the container, half through InjectionManager (the factory's own context).
                built.append(try StressType.all[dependency].resolve(index % 2 == 0 ? container : nil))
            }
            let builtInRound = buildLock.withLock { () -> Int in
                guard roundIsOn else { return 0 }
                roundBuilds[type] += 1
                return round
            }
            return StressInstance(
                type: type, generation: generation, lifetime: lifetime,
                resetsBegunAtStart: resetsBegunAtStart, round: builtInRound, dependencies: built)
        }
    }

    /// Registers `type` (a new generation) with `lifetime`; the caller holds the type's lock.
    private func registerLocked(_ type: Int, lifetime: InjectionLifetime) {
        let state = types[type]
        state.generation += 1
        state.isRegistered = true
        state.lifetime = lifetime
        StressType.all[type].register(target, lifetime, factory(type: type, generation: state.generation, lifetime: lifetime))
    }

    /// Unregisters `type` (a new generation); the caller holds the type's lock.
    private func unregisterLocked(_ type: Int) {
        let state = types[type]
        state.generation += 1
        state.isRegistered = false
        StressType.all[type].unregister(target)
    }

    func register(_ type: Int, lifetime: InjectionLifetime) {
        types[type].lock.withLock { registerLocked(type, lifetime: lifetime) }
    }

    func unregister(_ type: Int) {
        types[type].lock.withLock { unregisterLocked(type) }
    }

    func reset() {
        resetLock.withLock {
            counterLock.withLock { resetsBegun += 1 }
            if let target { target.reset() } else { InjectionManager.resetCurrentContainer() }
            counterLock.withLock { resetsEnded += 1 }
        }
    }

    /// `resetCurrentContainer { }` registering (lifetime) or unregistering (`nil`) each of `changes`.
    func transaction(_ changes: [Int: InjectionLifetime?]) {
        let changed = changes.keys.sorted()
        resetLock.withLock {
            for type in changed { types[type].lock.lock() }
            defer { for type in changed.reversed() { types[type].lock.unlock() } }
            counterLock.withLock { resetsBegun += 1 }
            let body = {
                for type in changed {
                    // Not yet visible to resolvers: they read the generation under the type lock we hold.
                    if let lifetime = changes[type]! { self.registerLocked(type, lifetime: lifetime) } else { self.unregisterLocked(type) }
                }
            }
            if let target { target.reset(body) } else { InjectionManager.resetCurrentContainer(body) }
            counterLock.withLock { resetsEnded += 1 }
        }
    }

    func resolve(_ type: Int) throws(InjectionError) -> StressInstance {
        try StressType.all[type].resolve(target)
    }

    // MARK: Invariants

    /// Resolves `type` and checks the instance against what was registered and reset before the call.
    func checkedResolve(_ type: Int, counts: inout StressCounts) -> StressInstance? {
        let before = registration(of: type)
        let resetsEndedBefore = resets.ended
        counts.resolves += 1
        do {
            let instance = try resolve(type)
            if instance.type != type { violation("resolve(\(type)) returned an instance of type \(instance.type)") }
            // Built by the registration current when the resolve began, or a later one.
            if instance.generation < before.generation {
                violation("resolve(\(type)) returned generation \(instance.generation), registered \(before.generation) before the call")
            }
            checkScope(instance, resetsEndedBefore: resetsEndedBefore, path: "\(type)")
            return instance
        } catch {
            counts.missing += 1
            guard error.kind == .notRegistered else {
                violation("resolve(\(type)) threw \(error)")
                return nil
            }
            if error.chain.count == 1, before.isRegistered, registration(of: type).generation == before.generation {
                violation("resolve(\(type)) threw notRegistered while it was registered throughout: \(error)")
            }
            return nil
        }
    }

    /// A resolve that began after a reset ended never gets an instance whose factory started before
    /// that reset began, nor one holding such an instance (except through a singleton, which may keep
    /// what it was built with).
    private func checkScope(_ instance: StressInstance, resetsEndedBefore: Int, path: String) {
        guard instance.lifetime != .singleton else { return }
        if instance.resetsBegunAtStart < resetsEndedBefore {
            violation("""
                a resolve that began after reset #\(resetsEndedBefore) got a \(instance.lifetime) instance \
                (path \(path)) whose factory started after only \(instance.resetsBegunAtStart) resets
                """)
        }
        for dependency in instance.dependencies {
            checkScope(dependency, resetsEndedBefore: resetsEndedBefore, path: "\(path)→\(dependency.type)")
        }
    }

    /// Two resolves of `type` with no reset and no register/unregister of `type` overlapping them
    /// return the same instance, unless it is transient.
    func checkPair(_ type: Int, counts: inout StressCounts) {
        let before = registration(of: type), resetsBefore = resets
        guard resetsBefore.begun == resetsBefore.ended,
              let first = try? resolve(type), let second = try? resolve(type) else { return }
        counts.resolves += 2
        guard registration(of: type).generation == before.generation, resets.begun == resetsBefore.begun else { return }
        counts.pairChecks += 1
        if first.lifetime == .transient ? first === second : first !== second {
            violation("two resolves of \(first.lifetime) type \(type) in one scope returned \(first === second ? "the same" : "different") instances")
        }
    }

    // MARK: Quiescent rounds

    /// Thread 0, between barriers: registers whatever is missing, starts a round, and resets.
    func beginRound(threads: Int) {
        for type in 0..<Self.typeCount where !registration(of: type).isRegistered {
            register(type, lifetime: lifetimes[type % lifetimes.count])
        }
        buildLock.withLock {
            round += 1
            roundIsOn = true
            roundBuilds = [Int](repeating: 0, count: Self.typeCount)
            roundResults = Array(repeating: [], count: threads)
        }
        reset()
    }

    /// Every thread, in the round: resolves every type once, in its own random order.
    func resolveEverything(thread: Int, random: inout SeededRandom, counts: inout StressCounts) {
        var results = [StressInstance?](repeating: nil, count: Self.typeCount)
        for type in (0..<Self.typeCount).shuffled(using: &random) {
            counts.roundResolves += 1
            do throws(InjectionError) {
                results[type] = try resolve(type)
            } catch {
                violation("round: resolve(\(type)) threw \(error)")
            }
        }
        buildLock.withLock { roundResults[thread] = results }
    }

    /// Thread 0, after every thread resolved everything: everyone got one instance per cached type,
    /// built exactly once in this round (singletons at most once), and factories got the same ones.
    func endRound() {
        let (current, builds, results) = buildLock.withLock { () -> (Int, [Int], [[StressInstance?]]) in
            roundIsOn = false
            defer { roundResults = [] }
            return (self.round, roundBuilds, roundResults)
        }
        let round = current
        for type in 0..<Self.typeCount {
            let got = results.compactMap { $0[type] }
            guard got.count == results.count, let canonical = got.first else { continue }  // Reported already.
            let lifetime = registration(of: type).lifetime
            let distinct = Set(got.map(ObjectIdentifier.init)).count
            switch lifetime {
            case .transient:
                if distinct != got.count { violation("round \(round): transient type \(type) handed one instance out twice") }
            case .scoped, .weak:
                if distinct != 1 { violation("round \(round): \(lifetime) type \(type) gave \(distinct) instances in one scope") }
                if builds[type] != 1 { violation("round \(round): \(lifetime) type \(type) was built \(builds[type]) times in one scope") }
                if canonical.round != round { violation("round \(round): \(lifetime) type \(type) came from before the round's reset") }
            case .singleton:
                if distinct != 1 { violation("round \(round): singleton type \(type) gave \(distinct) instances") }
                if builds[type] > 1 { violation("round \(round): singleton type \(type) was built \(builds[type]) times") }
            }
            // What factories resolved in this round is what everyone else got.
            for instance in got where instance.round == round {
                for dependency in instance.dependencies where dependency.lifetime != .transient {
                    if results[0][dependency.type] !== dependency {
                        violation("round \(round): type \(type)'s factory got a \(dependency.lifetime) \(dependency.type) that others did not")
                    }
                }
            }
        }
    }
}

// MARK: - Drivers

/// What each worker of a stress run is doing, kept so that a run that does not finish can say where
/// every thread is: never started, inside an operation on a type, or at the barrier.
final class StressActivity: @unchecked Sendable {
    private final class Slot: @unchecked Sendable {
        let lock = NSLock()
        var operation: StaticString = "not started"
        var type = -1, operations = 0
    }

    private let slots: [Slot]

    init(workers: Int) { slots = (0..<workers).map { _ in Slot() } }

    /// Notes that `worker` begins `operation` (on `type`, or -1 for none).
    func begin(_ worker: Int, _ operation: StaticString, type: Int = -1) {
        let slot = slots[worker]
        slot.lock.withLock {
            (slot.operation, slot.type) = (operation, type)
            slot.operations += 1
        }
    }

    /// One line per worker: its last operation begun, and how many it began.
    var summary: String {
        slots.enumerated().map { index, slot in
            slot.lock.withLock {
                "worker \(index): \(slot.operation)\(slot.type >= 0 ? " \(slot.type)" : "") (operation \(slot.operations))"
            }
        }.joined(separator: "\n")
    }
}

/// One thread's or task's chaos: random operations until `deadline`. `worker` and `activity` note each
/// operation before it begins.
func stressStep(
    _ world: StressWorld, random: inout SeededRandom, counts: inout StressCounts,
    worker: Int = 0, activity: StressActivity? = nil
) {
    let type = random.int(below: StressWorld.typeCount)
    switch random.int(below: 1000) {
    case 0..<700:
        activity?.begin(worker, "resolve", type: type)
        _ = world.checkedResolve(type, counts: &counts)
    case 700..<850:
        activity?.begin(worker, "resolve twice", type: type)
        world.checkPair(type, counts: &counts)
    case 850..<920:
        activity?.begin(worker, "register", type: type)
        counts.registers += 1
        world.register(type, lifetime: random.pick(world.lifetimes))
    case 920..<935:
        activity?.begin(worker, "unregister", type: type)
        counts.unregisters += 1
        world.unregister(type)
    case 935..<975:
        activity?.begin(worker, "reset")
        counts.resets += 1
        world.reset()
    default:
        activity?.begin(worker, "resetCurrentContainer { }")
        counts.transactions += 1
        var changes: [Int: InjectionLifetime?] = [:]
        for _ in 0..<random.int(in: 1...3) {
            changes[random.int(below: StressWorld.typeCount)] = random.chance(0.9) ? random.pick(world.lifetimes) : nil
        }
        world.transaction(changes)
    }
}

func nanosecondsNow() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func report(_ label: String, _ counts: StressCounts, seconds: Double, workers: Int) {
    print("""
        Stress (\(label)): \(workers) workers, \(String(format: "%.1f", seconds)) s: \
        \(counts.resolves) resolves (\(counts.missing) notRegistered), \(counts.registers) registers, \
        \(counts.unregisters) unregisters, \(counts.resets) resets, \(counts.transactions) resetCurrentContainer { }, \
        \(counts.pairChecks) same-scope pair checks, \(counts.rounds) quiescent rounds (\(counts.roundResolves) resolves)
        """)
}

@Suite("Stress", .serialized)
struct StressTests {
    /// Wall-clock budget of each test; the work done scales with the machine and the sanitizer.
    static let seconds = 5.0

    @Test("8 threads racing every operation on 50 types keep every invariant and never deadlock")
    func threadsKeepInvariants() {
        let seed = SeededRandom.seed(fromEnvironment: "INJECTION_SEED") ?? SeededRandom.freshSeed()
        let world = StressWorld(seed: seed, boundToTask: false)
        for type in 0..<StressWorld.typeCount { world.register(type, lifetime: world.lifetimes[type % 4]) }
        let threads = 8
        let barrier = Barrier(count: threads)
        let activity = StressActivity(workers: threads)
        let start = nanosecondsNow(), deadline = start + UInt64(Self.seconds * 1e9)
        let finished = runOnThreads(threads, timeout: Self.seconds + waitLimit) { index in
            var random = SeededRandom(seed: seed &+ UInt64(index))
            var counts = StressCounts()
            defer { world.add(counts) }
            var roundEnds = start  // The same rounds on every thread, however late it started.
            while true {
                // Chaos for a quarter of a second, then a quiescent round that checks the whole graph.
                roundEnds = min(deadline, roundEnds + 250_000_000)
                // The last round's chaos goes on until this thread has done its share of the work the checks
                // below need: under ThreadSanitizer beside CPU-heavy tests, 5 s once gave a tenth of it.
                while nanosecondsNow() < roundEnds
                    || (roundEnds >= deadline && !counts.isThreadShare && nanosecondsNow() < deadline + 80_000_000_000) {
                    stressStep(world, random: &random, counts: &counts, worker: index, activity: activity)
                }
                activity.begin(index, "barrier before the round")
                guard barrier.arrive() else { return world.violation("a thread never reached the barrier: deadlock?") }
                activity.begin(index, index == 0 ? "beginning the round" : "barrier after the round began")
                if index == 0 { world.beginRound(threads: threads) }
                guard barrier.arrive() else { return }
                activity.begin(index, "resolving every type in the round")
                world.resolveEverything(thread: index, random: &random, counts: &counts)
                activity.begin(index, "barrier after resolving every type")
                guard barrier.arrive() else { return }
                activity.begin(index, index == 0 ? "ending the round" : "barrier after the round ended")
                if index == 0 { world.endRound(); counts.rounds += 1 }
                guard barrier.arrive() else { return }
                if roundEnds >= deadline { return activity.begin(index, "finished") }
            }
        }
        let elapsed = Double(nanosecondsNow() - start) / 1e9
        report("threads, seed \(seed)", world.counts, seconds: elapsed, workers: threads)
        #expect(finished, "the threads did not finish: a deadlock. Where each was:\n\(activity.summary)")
        #expect(world.violations.isEmpty, "seed \(seed):\n\(world.violations.joined(separator: "\n"))")
        // The run must have done real work for the invariants to mean anything.
        #expect(world.counts.pairChecks > 100)
        #expect(world.counts.rounds >= 2)
        #expect(world.counts.resets > 10 && world.counts.transactions > 10 && world.counts.registers > 10)
    }

    @Test("8 tasks bound with withContainer racing every operation through InjectionManager keep every invariant")
    func tasksKeepInvariants() async {
        let seed = SeededRandom.seed(fromEnvironment: "INJECTION_SEED") ?? SeededRandom.freshSeed()
        let world = StressWorld(seed: seed, boundToTask: true)
        let tasks = 8, seconds = Self.seconds / 2
        let start = nanosecondsNow()
        let runTimes = Collector<Double>()
        await InjectionManager.withContainer(world.container) {
            for type in 0..<StressWorld.typeCount { world.register(type, lifetime: world.lifetimes[type % 4]) }
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<tasks {
                    group.addTask {
                        var random = SeededRandom(seed: seed &+ UInt64(index))
                        var counts = StressCounts()
                        // The budget counts from when this task first runs, until it has done its share of the
                        // work: while synchronous tests hold the cooperative pool, a task may not run for a minute.
                        let begun = nanosecondsNow()
                        let deadline = begun + UInt64(seconds * 1e9), hardStop = deadline + 80_000_000_000
                        while nanosecondsNow() < deadline || (counts.pairChecks < 25 && nanosecondsNow() < hardStop) {
                            for _ in 0..<32 { stressStep(world, random: &random, counts: &counts) }
                            await Task.yield()
                        }
                        runTimes.append(Double(nanosecondsNow() - begun) / 1e9)
                        world.add(counts)
                    }
                }
            }
        }
        let elapsed = Double(nanosecondsNow() - start) / 1e9
        report("tasks, seed \(seed)", world.counts, seconds: elapsed, workers: tasks)
        let longest = runTimes.values.max() ?? 0
        #expect(longest < seconds + 90, "a task ran \(longest) s, past its budget: a deadlock or a livelock")
        #expect(world.violations.isEmpty, "seed \(seed):\n\(world.violations.joined(separator: "\n"))")
        #expect(world.counts.pairChecks > 100)
        // Nothing leaked to the process-wide container.
        #expect(!InjectionManager.sharedContainer.isRegistered(StressKey<D0, D0>.self))
    }

    @Test("resolves racing with resets and registrations stay consistent")
    func resolvesRaceWithMutations() {
        let container = InjectionContainer()
        container.diagnosticsHandler = { _ in }  // It re-registers on purpose while cached instances depend on the type.
        container.register((any API).self) { LiveAPI(name: "0") }
        container.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        container.register(ViewModel.self) { ViewModel() }
        let clock = try! container.resolve((any Clock).self)
        let failures = Counter(), stale = Counter(), reregistered = Counter()  // API's n-th registration is named "n".
        let finished = runOnThreads(4) { index in
            for iteration in 0..<2_000 {
                switch (index, iteration % 50) {
                case (0, 0): container.reset()
                case (1, 0):
                    let name = String(reregistered.value + 1)
                    container.register((any API).self) { LiveAPI(name: name) }
                    reregistered.increment()
                case (2, 0): container.reset { container.register(Formatter.self) { Formatter() } }
                default:
                    // Once re-registration n has returned, no resolve that starts after it gets an older API.
                    let floor = reregistered.value
                    let viewModel = try! container.resolve(ViewModel.self)
                    if viewModel.clock !== clock { failures.increment() }
                    if Int((try! container.resolve((any API).self)).name)! < floor { stale.increment() }
                }
            }
        }
        #expect(finished)
        #expect(failures.value == 0)
        #expect(stale.value == 0, "a resolve got the API its re-registration had evicted")
    }
}
