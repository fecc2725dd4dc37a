import Injection
import LaunchTypes
import Swinject

/// The scenarios (issue 7's, then issue 15's and 39's), each a group of rows measured side by side in one process.
struct Suite {
    let options: Options
    var report = Report()

    init(options: Options) {
        self.options = options
    }

    /// Labels, shared by the table, the JSON and the targets.
    enum Library {
        static let injection = "Injection"
        static let swinject = "Swinject 2.10.0"
        static let dependencies = "swift-dependencies 1.17.1"
        static let baselineA = "(a) NSLock+[Any]+as!"
        static let baselineB = "(b) Mutex+typed boxes"
        static let floor = "(c) floor: global let"
        static let factoryB = "(b) Mutex+factory boxes"
        static let direct = "direct construction"
        static let processWide = "Injection, process-wide"
        static let isolated = "Injection, withContainer"
        static let inFactory = "Injection, in .scoped factory"
        static let seed = "(c2) seed: NSRecursiveLock+2 maps"
        static let injectInScope = "Injection, Inject() in scope"
        static let containerResolveInScope = "Injection, container.resolve in scope"
        static let resetAlone = "Injection, reset, no singletons"
        static let resetBeside = "Injection, reset, 65,536 singletons"
        static let chainShallow = "Injection, 100 levels"
        static let chainDeep = "Injection, 5,000 levels"
    }

    enum Key {
        static let cached = "1 cached"
        static let transient = "2 transient"
        static let threads = "3 threads"
        static let isolated = "4 isolated"
        static let login = "5 login"
        static let register = "6 register"
        static let resolveOne = "6 resolve-one"
        static let verify = "6 verify"
        static let memory = "7 memory"
        static let launchRegister = "8 launch-register"
        static let launchRegisterFresh = "8 launch-register-fresh"
        static let launchFirst = "8 launch-first-resolve"
        static let launchSteady = "8 launch-steady"
        static let launchReset = "8 launch-reset"
        static let launchMemory = "8 launch-memory"
        static let containerResolve = "9 container-resolve"
        static let resetBeside = "10 reset-singletons"
        static let chain = "11 chain"
    }

    private func wanted(_ key: String, _ title: String) -> Bool {
        guard let filter = options.filter?.lowercased(), !filter.isEmpty else { return true }
        return key.lowercased().contains(filter) || title.lowercased().contains(filter)
    }

    /// Rows queued by ``row(_:_:operationsPerIteration:smokeIterations:_:)`` for the scenario being set up.
    private var pending: [PendingRow] = []

    /// Queues a row of the current scenario; ``measureScenario()`` measures the queue.
    private mutating func row(
        _ scenario: String, _ library: String, operationsPerIteration: Int = 1, smokeIterations: Int = 100,
        _ run: @escaping (Int) -> Timing
    ) {
        pending.append(PendingRow(
            scenario: scenario, library: library, operationsPerIteration: operationsPerIteration,
            smokeIterations: smokeIterations, run: run))
    }

    /// Measures the queued rows with their runs interleaved (see ``measureInterleaved(_:options:)``), so
    /// the rows a target compares share the machine's slow and fast phases alike.
    private mutating func measureScenario() {
        for measurement in measureInterleaved(pending, options: options) {
            report.add(measurement)
            report.printProgress(measurement)
        }
        pending = []
    }

    mutating func run() {
        InjectionScenarios.setUp()
        SwinjectScenarios.setUp()
        DependenciesScenarios.setUp()
        Baselines.setUp()
        Self.checkScenariosDoTheWorkTheyClaim()

        if wanted(Key.cached, "cached resolve of a protocol-typed service") {
            let s = Key.cached
            row(s, Library.injection) { timed($0, InjectionScenarios.cachedLoop) }
            row(s, Library.swinject) { timed($0, SwinjectScenarios.cachedLoop) }
            row(s, Library.dependencies) { timed($0, DependenciesScenarios.cachedLoop) }
            row(s, Library.baselineA) { timed($0, Baselines.cachedLoopA) }
            row(s, Library.baselineB) { timed($0, Baselines.cachedLoopB) }
            row(s, Library.floor) { timed($0, Baselines.cachedLoopFloor) }
            report.references[s] = (Library.baselineB, Library.floor)
            measureScenario()
        }

        if wanted(Key.transient, "transient resolve of a 3-level graph") {
            let s = Key.transient
            row(s, Library.injection) { timed($0, InjectionScenarios.graphLoop) }
            row(s, Library.swinject) { timed($0, SwinjectScenarios.graphLoop) }
            row(s, Library.factoryB) { timed($0, Baselines.graphLoopB) }
            row(s, Library.direct) { timed($0, Baselines.graphLoopDirect) }
            report.references[s] = (Library.factoryB, Library.direct)
            measureScenario()
        }

        if wanted(Key.threads, "2 threads resolving the same cached service") {
            let s = Key.threads
            row(s, Library.injection) { onTwoThreads($0) { InjectionScenarios.cachedLoop($0) } }
            row(s, Library.swinject) { onTwoThreads($0) { SwinjectScenarios.cachedLoop($0) } }
            row(s, Library.baselineB) { onTwoThreads($0) { Baselines.cachedLoopB($0) } }
            row(s, Library.floor) { onTwoThreads($0) { Baselines.cachedLoopFloor($0) } }
            report.references[s] = (Library.baselineB, Library.floor)
            measureScenario()
        }

        if wanted(Key.isolated, "cached resolve inside an isolated container (withContainer)") {
            let s = Key.isolated
            row(s, Library.processWide) { timed($0, InjectionScenarios.cachedLoop) }
            row(s, Library.isolated) { timed($0, InjectionScenarios.isolatedLoop) }
            // Informational (no floor): inside a running `.scoped` factory every resolve carries the
            // resolution chain that cycle detection follows, and a dependency to record for the graph.
            row(s, Library.inFactory) { timed($0, InjectionScenarios.inFactoryLoop) }
            // The baselines of scenario 1 (same operation), when it ran.
            report.references[s] = (Library.baselineB, Library.floor)
            report.referenceScenario[s] = Key.cached
            measureScenario()
        }

        if wanted(Key.login, "login/logout loop: resolve 5 scoped services, then reset") {
            let s = Key.login
            row(s, Library.injection, smokeIterations: 20) { timed($0, InjectionScenarios.loginLogoutLoop) }
            row(s, Library.swinject, smokeIterations: 20) { timed($0, SwinjectScenarios.loginLogoutLoop) }
            measureScenario()
        }

        if wanted(Key.register, "register 10,000 types; resolve one; verify") {
            runTenThousandTypes()
        }

        if wanted(Key.memory, "memory after 1 vs 10,000 login/logout cycles") {
            report.memory.append(memoryAfterCycles(Library.injection, InjectionScenarios.loginLogoutLoop))
            report.memory.append(memoryAfterCycles(Library.swinject, SwinjectScenarios.loginLogoutLoop))
        }

        if wanted("8 launch", "launch: 2,000 protocol types against the seed design (c2)") {
            runLaunch()
        }

        if wanted(Key.containerResolve, "container.resolve inside withContainer against Inject()") {
            let s = Key.containerResolve
            row(s, Library.injectInScope) { timed($0, LaunchScenarios.injectInScope) }
            row(s, Library.containerResolveInScope) { timed($0, LaunchScenarios.containerResolveInScope) }
            measureScenario()
        }

        if wanted(Key.resetBeside, "reset + one resolve beside 65,536 cached singletons of the same container") {
            let s = Key.resetBeside
            // Two containers, each with one scoped type; the second also holds 65,536 cached singletons.
            // Built before the clock (the second takes a while).
            _ = (LaunchScenarios.resetAloneContainer, LaunchScenarios.resetBesideContainer)
            row(s, Library.resetAlone) { LaunchScenarios.resetAndResolve(beside: false, $0) }
            row(s, Library.resetBeside) { LaunchScenarios.resetAndResolve(beside: true, $0) }
            measureScenario()
        }

        if wanted(Key.chain, "a .transient chain of 5,000 levels against 100, on a 64 MiB thread") {
            let s = Key.chain
            ChainScenarios.check()
            // ns per level: per factory run, the floor's included (5,001 and 101 a resolve).
            row(s, Library.chainShallow, operationsPerIteration: ChainScenarios.shallowLevels + 1, smokeIterations: 2) {
                ChainScenarios.chainRun(level: ChainScenarios.shallowLevels, $0)
            }
            row(s, Library.chainDeep, operationsPerIteration: ChainScenarios.deepLevels + 1, smokeIterations: 2) {
                ChainScenarios.chainRun(level: ChainScenarios.deepLevels, $0)
            }
            measureScenario()
        }
    }

    // MARK: - 8. Launch

    private mutating func runLaunch() {
        let types = launchTypeCount
        row(Key.launchRegister, Library.injection, operationsPerIteration: types, smokeIterations: 1, LaunchScenarios.registerInjection)
        row(Key.launchRegister, Library.seed, operationsPerIteration: types, smokeIterations: 1, LaunchScenarios.registerSeed)
        measureScenario()
        row(Key.launchFirst, Library.injection, operationsPerIteration: types, smokeIterations: 1, LaunchScenarios.firstResolveInjection)
        row(Key.launchFirst, Library.seed, operationsPerIteration: types, smokeIterations: 1, LaunchScenarios.firstResolveSeed)
        measureScenario()
        row(Key.launchSteady, Library.injection, operationsPerIteration: types, smokeIterations: 1, LaunchScenarios.steadyInjection)
        row(Key.launchSteady, Library.seed, operationsPerIteration: types, smokeIterations: 1, LaunchScenarios.steadySeed)
        measureScenario()
        row(Key.launchReset, Library.injection, operationsPerIteration: types, smokeIterations: 1, LaunchScenarios.resetInjection)
        row(Key.launchReset, Library.seed, operationsPerIteration: types, smokeIterations: 1, LaunchScenarios.resetSeed)
        measureScenario()

        // A fresh process per measurement: what an app's launch pays. A child registers 2,000 types in about
        // a millisecond, so one child's figure is mostly the machine's noise: each run takes the best of three
        // children a side, spawned in the order I S S I I S, so neither side always goes first.
        var fresh: (injection: [Double], seed: [Double]) = ([], [])
        for _ in 0..<options.runs {
            var injection = Double.infinity, seed = Double.infinity
            for injectionFirst in [true, false, true] {
                for mode in injectionFirst ? ["register-injection", "register-seed"] : ["register-seed", "register-injection"] {
                    let figure = LaunchScenarios.spawnChild(mode)[0]
                    if mode == "register-injection" { injection = min(injection, figure) } else { seed = min(seed, figure) }
                }
            }
            fresh.injection.append(injection)
            fresh.seed.append(seed)
        }
        for (library, figures) in [(Library.injection, fresh.injection), (Library.seed, fresh.seed)] {
            let measurement = Measurement(
                scenario: Key.launchRegisterFresh, library: library, iterationsPerRun: 1, operationsPerIteration: types,
                nanosecondsPerOperation: figures)
            report.add(measurement)
            report.printProgress(measurement)
        }

        // Heap bytes per registration, registered and resolved once, each in a process of its own.
        let injection = LaunchScenarios.spawnChild("memory-injection"), seed = LaunchScenarios.spawnChild("memory-seed")
        report.launchMemory = LaunchMemory(
            injection: injection[0], injectionSecondPass: injection.count > 1 ? injection[1] : injection[0], seed: seed[0])
        print("memory per registration: Injection \(Int(injection[0])) B (after a reset and a second pass: "
            + "\(Int(injection.count > 1 ? injection[1] : injection[0])) B), (c2) \(Int(seed[0])) B")
    }

    /// Fails loudly if a library does not do what a row claims: a cached resolve must return one
    /// instance, a transient one a new graph each time, and a reset must evict the session services.
    static func checkScenariosDoTheWorkTheyClaim() {
        precondition(InjectionScenarios.resolveService() === InjectionScenarios.resolveService(), "Injection: not cached")
        precondition(SwinjectScenarios.resolveService() === SwinjectScenarios.resolveService(), "Swinject: not cached")
        precondition(DependenciesScenarios.resolveService() === DependenciesScenarios.resolveService(), "swift-dependencies: not cached")
        precondition(Baselines.resolveB() === Baselines.resolveB(), "(b): not cached")
        precondition(InjectionScenarios.inFactoryLoop(3) == 3 && InjectionScenarios.inFactoryLoop(5) == 5,
                     "Injection: the .scoped factory of the in-factory row did not run again after a reset")

        let graph = InjectionScenarios.resolveGraph()
        precondition(graph !== InjectionScenarios.resolveGraph() && graph.c !== graph.b.c, "Injection: graph not transient")
        let swinjectGraph = SwinjectScenarios.resolveGraph()
        precondition(swinjectGraph !== SwinjectScenarios.resolveGraph() && swinjectGraph.c !== swinjectGraph.b.c, "Swinject: graph not transient")
        let graphB = Baselines.resolveGraphB()
        precondition(graphB !== Baselines.resolveGraphB() && graphB.c !== graphB.b.c, "(b): graph not transient")

        let injectionSession: any SessionService1 = Inject()
        precondition(injectionSession === (Inject() as any SessionService1), "Injection: session service not cached")
        InjectionManager.resetCurrentContainer()
        precondition(injectionSession !== (Inject() as any SessionService1), "Injection: reset did not evict")
        let resolver = SwinjectScenarios.resolver
        let swinjectSession = resolver.resolve((any SessionService1).self)!
        precondition(swinjectSession === resolver.resolve((any SessionService1).self)!, "Swinject: session service not cached")
        SwinjectScenarios.container.resetObjectScope(.container)
        precondition(swinjectSession !== resolver.resolve((any SessionService1).self)!, "Swinject: reset did not evict")
    }

    // MARK: - 6. 10,000 types

    static let typeCount = 10_000

    private mutating func runTenThousandTypes() {
        var types: [any Tag.Type] = []
        types.reserveCapacity(Self.typeCount)
        forEachTagType(count: Self.typeCount) { types.append($0) }
        precondition(Set(types.map { ObjectIdentifier($0) }).count == Self.typeCount, "tag types are not distinct")
        let last = types[types.count - 1]
        let types_ = types

        // Registration: ns per registered type; each iteration fills a new container with all 10,000.
        // The containers are created before and released after the clock.
        row(Key.register, Library.injection, operationsPerIteration: Self.typeCount, smokeIterations: 1) { iterations in
            let containers = (0..<iterations).map { _ in InjectionContainer() }
            let start = monotonicNanoseconds()
            for container in containers { InjectionScenarios.register(types_, in: container) }
            let end = monotonicNanoseconds()
            return Timing(nanoseconds: end - start, checksum: containers.count)
        }
        row(Key.register, Library.swinject, operationsPerIteration: Self.typeCount, smokeIterations: 1) { iterations in
            let containers = (0..<iterations).map { _ in Container() }
            let start = monotonicNanoseconds()
            for container in containers { SwinjectScenarios.register(types_, in: container) }
            let end = monotonicNanoseconds()
            return Timing(nanoseconds: end - start, checksum: containers.count)
        }

        // Resolve one (the last registered, cached) out of 10,000.
        let injection = InjectionContainer()
        InjectionScenarios.register(types, in: injection)
        row(Key.resolveOne, Library.injection) { iterations in
            timed(iterations) { InjectionScenarios.resolveLoop(last, in: injection, iterations: $0) }
        }
        let swinject = Container()
        SwinjectScenarios.register(types, in: swinject)
        let swinjectResolver = swinject.synchronize()
        row(Key.resolveOne, Library.swinject) { iterations in
            timed(iterations) { SwinjectScenarios.resolveLoop(last, in: swinjectResolver, iterations: $0) }
        }

        // VERIFY SPOT (issue 7): verify() over all 10,000 registrations, ns per registration verified.
        let problems = InjectionScenarios.verifyLoop(injection, iterations: 1)
        precondition(problems == 0, "Injection: verify() reported \(problems) problem(s) on a sound graph")
        row(Key.verify, Library.injection, operationsPerIteration: Self.typeCount, smokeIterations: 1) { iterations in
            timed(iterations) { InjectionScenarios.verifyLoop(injection, iterations: $0) }
        }
        measureScenario()
        report.verify = "verify(): Injection only (Swinject has no equivalent); see row \(Key.verify)"
    }

    // MARK: - 7. Memory

    static let memoryCycles = 10_000

    private func memoryAfterCycles(_ library: String, _ loop: (Int) -> Int) -> MemoryResult {
        blackHole(loop(1))
        let afterOne = MemorySnapshot.now()
        blackHole(loop(Self.memoryCycles - 1))
        let afterAll = MemorySnapshot.now()
        let result = MemoryResult(library: library, cycles: Self.memoryCycles, afterOne: afterOne, afterAll: afterAll)
        report.printProgress(result)
        return result
    }
}
