import Foundation
import Injection
import LaunchTypes

/// Scenarios 8-10: launch with 2,000 protocol types against the seed design (c2), memory per registration,
/// `container.resolve` inside `withContainer`, and the cost of a reset beside 65,536 cached singletons.
enum LaunchScenarios {
    // MARK: - 8. Launch

    /// Registers every launch type into each of `containers` (made before the clock), timed.
    static func registerInjection(_ iterations: Int) -> Timing {
        let containers = (0..<iterations).map { _ in InjectionContainer() }
        let start = monotonicNanoseconds()
        for container in containers { registerLaunchTypes(in: container) }
        let end = monotonicNanoseconds()
        return Timing(nanoseconds: end - start, checksum: containers.count)
    }

    static func registerSeed(_ iterations: Int) -> Timing {
        let registries = (0..<iterations).map { _ in SeedRegistry() }
        let start = monotonicNanoseconds()
        for registry in registries { registerLaunchTypes(in: registry) }
        let end = monotonicNanoseconds()
        return Timing(nanoseconds: end - start, checksum: registries.count)
    }

    /// The first resolve of every launch type, in containers registered before the clock.
    static func firstResolveInjection(_ iterations: Int) -> Timing {
        let containers = (0..<iterations).map { _ in InjectionContainer() }
        for container in containers { registerLaunchTypes(in: container) }
        return timed(iterations) { _ in containers.reduce(0) { $0 &+ resolveLaunchTypes(in: $1) } }
    }

    static func firstResolveSeed(_ iterations: Int) -> Timing {
        let registries = (0..<iterations).map { _ in SeedRegistry() }
        for registry in registries { registerLaunchTypes(in: registry) }
        return timed(iterations) { _ in registries.reduce(0) { $0 &+ resolveLaunchTypes(in: $1) } }
    }

    /// A container and a registry with every launch type registered and resolved once.
    static let warmContainer: InjectionContainer = {
        let container = InjectionContainer()
        registerLaunchTypes(in: container)
        blackHole(resolveLaunchTypes(in: container))
        return container
    }()

    static let warmRegistry: SeedRegistry = {
        let registry = SeedRegistry()
        registerLaunchTypes(in: registry)
        blackHole(resolveLaunchTypes(in: registry))
        return registry
    }()

    /// Every launch type again, already resolved: 2,000 cached instances of one container.
    static func steadyInjection(_ iterations: Int) -> Timing {
        timed(iterations) { iterations in (0..<iterations).reduce(0) { sum, _ in sum &+ resolveLaunchTypes(in: warmContainer) } }
    }

    static func steadySeed(_ iterations: Int) -> Timing {
        timed(iterations) { iterations in (0..<iterations).reduce(0) { sum, _ in sum &+ resolveLaunchTypes(in: warmRegistry) } }
    }

    /// A reset, then the first resolve of every launch type after it.
    static func resetInjection(_ iterations: Int) -> Timing {
        timed(iterations) { iterations in
            (0..<iterations).reduce(0) { sum, _ in
                warmContainer.reset()
                return sum &+ resolveLaunchTypes(in: warmContainer)
            }
        }
    }

    static func resetSeed(_ iterations: Int) -> Timing {
        timed(iterations) { iterations in
            (0..<iterations).reduce(0) { sum, _ in
                warmRegistry.reset()
                return sum &+ resolveLaunchTypes(in: warmRegistry)
            }
        }
    }

    // MARK: - 8. Fresh processes: register at launch, and memory per registration

    /// What a child process measures: `register-injection`, `register-seed`, `memory-injection`, `memory-seed`.
    static let childModes = ["register-injection", "register-seed", "memory-injection", "memory-seed"]

    /// Runs in a child process (`--child MODE`): prints its figures on one line and exits.
    static func runChild(_ mode: String) -> Never {
        let count = Double(launchTypeCount)
        switch mode {
        case "register-injection":
            let container = InjectionContainer()
            let start = monotonicNanoseconds()
            registerLaunchTypes(in: container)
            let end = monotonicNanoseconds()
            print(Double(end - start) / count)
            withExtendedLifetime(container) {}
        case "register-seed":
            let registry = SeedRegistry()
            let start = monotonicNanoseconds()
            registerLaunchTypes(in: registry)
            let end = monotonicNanoseconds()
            print(Double(end - start) / count)
            withExtendedLifetime(registry) {}
        case "memory-injection":
            let before = MemorySnapshot.now().heapInUseBytes
            let container = InjectionContainer()
            registerLaunchTypes(in: container)
            blackHole(resolveLaunchTypes(in: container))
            let once = MemorySnapshot.now().heapInUseBytes
            container.reset()
            blackHole(resolveLaunchTypes(in: container))
            let twice = MemorySnapshot.now().heapInUseBytes
            print(Double(once - before) / count, Double(twice - before) / count)
            withExtendedLifetime(container) {}
        case "memory-seed":
            let before = MemorySnapshot.now().heapInUseBytes
            let registry = SeedRegistry()
            registerLaunchTypes(in: registry)
            blackHole(resolveLaunchTypes(in: registry))
            let once = MemorySnapshot.now().heapInUseBytes
            print(Double(once - before) / count)
            withExtendedLifetime(registry) {}
        default:
            FileHandle.standardError.write(Data("error: unknown child mode \(mode); one of \(childModes)\n".utf8))
            exit(2)
        }
        exit(0)
    }

    /// Runs one launch scenario `iterations` times and exits (`--profile MODE N`), for a profiler.
    static func profile(_ mode: String, iterations: Int) -> Never {
        let runs: [String: (Int) -> Timing] = [
            "register": registerInjection, "register-seed": registerSeed,
            "first": firstResolveInjection, "first-seed": firstResolveSeed,
            "steady": steadyInjection, "steady-seed": steadySeed,
            "reset": resetInjection, "reset-seed": resetSeed,
            // Scenarios 1, 2 and 4 (per resolve or graph, against their baselines), for callgrind's counts.
            "cached": hot(InjectionScenarios.cachedLoop), "cached-b": hot(Baselines.cachedLoopB),
            "graph": hot(InjectionScenarios.graphLoop), "graph-direct": hot(Baselines.graphLoopDirect),
            "in-factory": hot(InjectionScenarios.inFactoryLoop),
            // Scenarios 10 and 11: N reset + resolves; N resolves of the chain's level 100 or 5,000.
            "reset-none": { resetAndResolve(beside: false, $0) }, "reset-singletons": { resetAndResolve(beside: true, $0) },
            "chain-100": { ChainScenarios.chainRun(level: ChainScenarios.shallowLevels, $0) },
            "chain-5000": { ChainScenarios.chainRun(level: ChainScenarios.deepLevels, $0) },
        ]
        guard let run = runs[mode] else {
            FileHandle.standardError.write(Data("error: unknown profile mode \(mode); one of \(runs.keys.sorted())\n".utf8))
            exit(2)
        }
        let warm = run(1)  // Warm: the shared containers, metadata and conformance caches.
        print(mode, "warm-up", Double(warm.nanoseconds) / Double(launchTypeCount), "ns per type")
        let timing = profiledRun(run, iterations)
        print(mode, Double(timing.nanoseconds) / Double(iterations * launchTypeCount), "ns per type")
        exit(0)
    }

    /// A hot-path scenario as a profile: `iterations` thousand resolves (or graphs), its containers set up first.
    private static func hot(_ loop: @escaping (Int) -> Int) -> (Int) -> Timing {
        { iterations in
            _ = hotSetUp
            return timed(iterations * 1000, loop)
        }
    }

    private static let hotSetUp: Void = {
        InjectionScenarios.setUp()
        Baselines.setUp()
    }()

    /// The measured part of a profile, apart from its warm-up: give callgrind
    /// `--collect-atstart=no --toggle-collect='*profiledRun*'`.
    @inline(never)
    static func profiledRun(_ run: (Int) -> Timing, _ iterations: Int) -> Timing { run(iterations) }

    /// Runs this executable as a child in `mode`; returns the numbers it printed.
    static func spawnChild(_ mode: String) -> [Double] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        if !FileManager.default.fileExists(atPath: "/proc/self/exe") {
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        }
        process.arguments = ["--child", mode]
        let output = Pipe()
        process.standardOutput = output
        do { try process.run() } catch { fatalError("could not start a child process: \(error)") }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Double($0) }
        precondition(process.terminationStatus == 0 && !numbers.isEmpty, "child \(mode) failed: \(text)")
        return numbers
    }

    // MARK: - 9. container.resolve inside withContainer

    static let scopeContainer: InjectionContainer = {
        let container = InjectionContainer()
        container.register((any Service).self) { LiveService(value: 1) }
        return container
    }()

    @inline(never)
    static func injectInScope(_ iterations: Int) -> Int {
        InjectionManager.withContainer(scopeContainer) {
            var checksum = 0
            for _ in 0..<iterations { checksum &+= (Inject() as any Service).value }
            return checksum
        }
    }

    @inline(never)
    static func containerResolveInScope(_ iterations: Int) -> Int {
        let container = scopeContainer
        return InjectionManager.withContainer(container) {
            var checksum = 0
            for _ in 0..<iterations { checksum &+= (try! container.resolve((any Service).self)).value }
            return checksum
        }
    }

    // MARK: - 10. A reset beside 65,536 cached singletons of the same container

    static let singletonCount = 1 << 16

    /// A container whose session is one scoped type, resolved; if `singletons`, it also holds 65,536
    /// `.singleton`s, each resolved (so cached) once. A reset evicts the scoped instance and must not
    /// cost in proportion to the singletons, which it keeps.
    static func makeResetContainer(singletons: Bool) -> InjectionContainer {
        let container = InjectionContainer()
        if singletons {
            let builds = BuildCount()
            forEachTagType(count: singletonCount, depth: 16) { type in
                func register<T: Tag>(_: T.Type) {
                    container.register(T.self, lifetime: .singleton) { builds.add(); return T() }
                }
                register(type)
            }
            resolveAll(in: container)
            container.reset()
            resolveAll(in: container)  // Still cached: a reset keeps singletons.
            precondition(builds.count == singletonCount, "\(builds.count) singleton builds for \(singletonCount) types")
        }
        container.register((any Service).self) { LiveService(value: 1) }
        let first = try! container.resolve((any Service).self)
        container.reset()
        precondition(first !== (try! container.resolve((any Service).self)), "reset row: the reset did not evict")
        return container
    }

    private static func resolveAll(in container: InjectionContainer) {
        forEachTagType(count: singletonCount, depth: 16) { type in
            func resolve<T: Tag>(_: T.Type) { blackHole(MemoryLayout.size(ofValue: try! container.resolve(T.self))) }
            resolve(type)
        }
    }

    private final class BuildCount: @unchecked Sendable {  // Built on one thread, read after.
        private(set) var count = 0
        func add() { count += 1 }
    }

    static let resetAloneContainer = makeResetContainer(singletons: false)
    static let resetBesideContainer = makeResetContainer(singletons: true)

    /// Resets `container` and resolves its scoped type again, `iterations` times.
    static func resetAndResolve(beside singletons: Bool, _ iterations: Int) -> Timing {
        let container = singletons ? resetBesideContainer : resetAloneContainer
        return timed(iterations) { iterations in
            var checksum = 0
            for _ in 0..<iterations {
                container.reset()
                checksum &+= (try! container.resolve((any Service).self)).value
            }
            return checksum
        }
    }
}
