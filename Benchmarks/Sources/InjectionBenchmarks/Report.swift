#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Memory before and after many login/logout cycles.
struct MemoryResult: Sendable, Codable {
    var library: String
    var cycles: Int
    var afterOne: MemorySnapshot
    var afterAll: MemorySnapshot

    var heapGrowth: Int { afterAll.heapInUseBytes - afterOne.heapInUseBytes }
    var residentGrowth: Int { afterAll.residentBytes - afterOne.residentBytes }
}

/// Everything measured in one run, printed as a table and written as JSON.
struct Report {
    private(set) var measurements: [Measurement] = []
    /// Per scenario: the libraries whose figures are "(b)" and "(c)" for the ratio columns.
    var references: [String: (b: String, c: String)] = [:]
    /// Per scenario: the scenario whose reference rows to use, when not its own.
    var referenceScenario: [String: String] = [:]
    /// Scenario 8: heap bytes per registration, measured in child processes.
    var launchMemory: LaunchMemory?
    var memory: [MemoryResult] = []
    var verify: String?

    /// Allowed growth of heap bytes in use between cycle 1 and cycle 10,000, fixed before measuring:
    /// malloc bookkeeping noise, under half a byte per cycle. Anything above is growth.
    static let heapGrowthTolerance = 4096

    mutating func add(_ measurement: Measurement) {
        measurements.append(measurement)
    }

    func best(_ scenario: String, _ library: String) -> Double? {
        measurements.first { $0.scenario == scenario && $0.library == library }?.best
    }

    private func ratios(for measurement: Measurement) -> (b: Double?, c: Double?) {
        guard let names = references[measurement.scenario] else { return (nil, nil) }
        let scenario = referenceScenario[measurement.scenario] ?? measurement.scenario
        let b = best(scenario, names.b).map { measurement.best / $0 }
        let c = best(scenario, names.c).map { measurement.best / $0 }
        return (b, c)
    }

    // MARK: - Terminal

    func printProgress(_ measurement: Measurement) {
        let line = "  measured \(measurement.scenario) / \(measurement.library): \(format(measurement.best)) ns/op"
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    func printProgress(_ memory: MemoryResult) {
        let line = "  measured memory / \(memory.library)"
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    func printTable(options: Options, environment: Environment) {
        print("")
        print("Injection benchmarks — \(environment.date), \(environment.buildConfiguration) build, "
            + "best of \(options.runs) run(s)\(options.smoke ? " (SMOKE: numbers are meaningless)" : "")")
        print("toolchain: \(environment.toolchain)")
        print("machine:   \(environment.machine.summary)")
        print("")
        let header = [
            pad("scenario", 14), pad("library", 26), lpad("ns/op", 10), lpad("median", 10),
            pad("  spread: min..max (worst vs best)", 36), lpad("vs (b)", 8), lpad("vs (c)", 8),
        ].joined()
        print(header)
        print(String(repeating: "-", count: header.count))
        var previous: String?
        for measurement in measurements {
            if let previous, previous != measurement.scenario { print("") }
            previous = measurement.scenario
            let (b, c) = ratios(for: measurement)
            let spread = "  \(format(measurement.best))..\(format(measurement.worst)) (+\(String(format: "%.1f", measurement.spread * 100))%)"
            print([
                pad(measurement.scenario, 14), pad(measurement.library, 26),
                lpad(format(measurement.best), 10), lpad(format(measurement.median), 10),
                pad(spread, 36), lpad(b.map(formatRatio) ?? "—", 8), lpad(c.map(formatRatio) ?? "—", 8),
            ].joined())
        }
        print("""

        ns/op: best run. 1, 4: per resolve. 2: per graph (4 objects). 3: wall time / total resolves on both \
        threads. 5: per cycle (5 resolves + 1 reset). 6 register: per registered type; resolve-one: per resolve; verify: \
        one verify() of 10,000 registrations / 10,000. 8: per type. 9: per resolve. 10: per reset + resolve. \
        11: per level (factory run).
        vs (b)/(c): best / best of the scenario's (b) and (c) rows (2: (b) factory registry, (c) direct \
        construction; 4: scenario 1's).
        """)
        if let verify { print(verify) }
        for memory in memory {
            print("memory \(memory.library): after 1 cycle heap \(bytes(memory.afterOne.heapInUseBytes)), "
                + "RSS \(bytes(memory.afterOne.residentBytes)); after \(memory.cycles): heap "
                + "\(bytes(memory.afterAll.heapInUseBytes)), RSS \(bytes(memory.afterAll.residentBytes)); "
                + "growth heap \(signedBytes(memory.heapGrowth)), RSS \(signedBytes(memory.residentGrowth))")
        }
    }

    // MARK: - Targets

    struct Target: Codable {
        var name: String
        var measured: String
        var limit: String
        /// `nil`: not measured in this run (filtered out, or not measurable).
        var pass: Bool?
        /// `false`: an informational line, printed with no verdict.
        var floor = true
    }

    func targets() -> [Target] {
        typealias L = Suite.Library
        typealias K = Suite.Key
        var targets: [Target] = []
        /// A target on `numerator / denominator`, two rows of `scenario`. The verdict uses the median of
        /// the per-round ratios: the rows' runs are interleaved, so run r of each row was taken in round r,
        /// side by side, and each round's ratio cancels the machine's drift; the median then drops the
        /// rounds a burst of noise hit on one side. The ratio of the two rows' best runs is printed too.
        func ratio(_ name: String, _ limit: String, _ scenario: String, _ numerator: String, _ denominator: String,
                   label: String, unit: String = "ns", passes: (Double) -> Bool) {
            guard let top = measurements.first(where: { $0.scenario == scenario && $0.library == numerator }),
                  let bottom = measurements.first(where: { $0.scenario == scenario && $0.library == denominator }),
                  !top.nanosecondsPerOperation.isEmpty,
                  top.nanosecondsPerOperation.count == bottom.nanosecondsPerOperation.count
            else {
                targets.append(Target(name: name, measured: "not measured in this run", limit: limit, pass: nil))
                return
            }
            let paired = zip(top.nanosecondsPerOperation, bottom.nanosecondsPerOperation).map { $0 / $1 }.sorted()
            let median = median(of: paired)
            let measured = "\(label) = \(formatRatio(median)) (median of \(paired.count) paired rounds, "
                + "\(formatRatio(paired.first!))..\(formatRatio(paired.last!)); best runs: "
                + "\(format(top.best)) vs \(format(bottom.best)) \(unit) = \(formatRatio(top.best / bottom.best)))"
            targets.append(Target(name: name, measured: measured, limit: limit, pass: passes(median)))
        }
        // Issue 39's speed floors, in its table's order and words.
        ratio("cached resolve, against (b)", "<= 1.30x", K.cached, L.injection, L.baselineB,
              label: "Injection / (b)", passes: { $0 <= 1.3 })
        ratio("isolated container, against the process-wide resolve", "<= 1.20x",
              K.isolated, L.isolated, L.processWide, label: "withContainer / process-wide", passes: { $0 <= 1.2 })
        ratio("3-level transient graph, against direct construction", "<= 6.00x",
              K.transient, L.injection, L.direct, label: "Injection / direct", passes: { $0 <= 6 })
        ratio("2 threads contended, against (b)'s own 2-thread figure", "<= 2.00x",
              K.threads, L.injection, L.baselineB, label: "Injection / (b) (2 threads)", passes: { $0 <= 2 })
        ratio("login/logout, against Swinject", ">= 3.00x faster",
              K.login, L.swinject, L.injection, label: "Swinject / Injection", unit: "ns/cycle", passes: { $0 >= 3 })
        ratio("cached resolve, against Swinject", ">= 20.00x faster",
              K.cached, L.swinject, L.injection, label: "Swinject / Injection", passes: { $0 >= 20 })
        ratio("launch register on a warm registry, against (c2)", "<= 3.50x",
              K.launchRegister, L.injection, L.seed, label: "Injection / (c2)", passes: { $0 <= 3.5 })
        ratio("launch register in a fresh process, against (c2)", "<= 2.00x",
              K.launchRegisterFresh, L.injection, L.seed, label: "Injection / (c2)", passes: { $0 <= 2 })
        ratio("first resolve, against (c2)", "<= 2.00x",
              K.launchFirst, L.injection, L.seed, label: "Injection / (c2)", passes: { $0 <= 2 })
        ratio("steady pass over 2,000 types, against (c2)", "<= 1.20x",
              K.launchSteady, L.injection, L.seed, label: "Injection / (c2)", passes: { $0 <= 1.2 })
        ratio("reset + first resolves, against (c2)", "<= 3.00x",
              K.launchReset, L.injection, L.seed, label: "Injection / (c2)", passes: { $0 <= 3 })
        if let launchMemory {
            let ratio = launchMemory.injection / launchMemory.seed
            targets.append(Target(
                name: "heap per registration (registered and resolved once), against (c2)",
                measured: "Injection / (c2) = \(formatRatio(ratio)) (\(Int(launchMemory.injection)) vs \(Int(launchMemory.seed)) B; "
                    + "\(Int(launchMemory.injectionSecondPass)) B after a reset and a second pass)",
                limit: "<= 2.50x", pass: launchMemory.seed > 0 ? ratio <= 2.5 : nil))
        } else {
            targets.append(Target(name: "heap per registration, against (c2)", measured: "not measured in this run",
                                  limit: "<= 2.50x", pass: nil))
        }
        ratio("`container.resolve` in `withContainer`, against `Inject()`", "<= 1.20x",
              K.containerResolve, L.containerResolveInScope, L.injectInScope,
              label: "container.resolve / Inject()", passes: { $0 <= 1.2 })
        ratio("reset + resolve beside 65,536 cached singletons of the same container, against none", "<= 2.00x",
              K.resetBeside, L.resetBeside, L.resetAlone, label: "65,536 singletons / none", passes: { $0 <= 2 })
        if let injection = memory.first(where: { $0.library == L.injection }) {
            let growth = injection.heapGrowth
            let measured = injection.afterOne.heapInUseBytes < 0
                ? "heap figures unavailable on this platform"
                : "heap in use grew \(signedBytes(growth)) from cycle 1 to \(grouped(injection.cycles)) (RSS \(signedBytes(injection.residentGrowth)))"
            targets.append(Target(
                name: "memory after \(grouped(injection.cycles)) login/logout cycles",
                measured: measured, limit: "+0 B (malloc noise: heap growth <= \(Report.heapGrowthTolerance) B)",
                pass: injection.afterOne.heapInUseBytes < 0 ? nil : growth <= Report.heapGrowthTolerance))
        } else {
            targets.append(Target(name: "memory after 10,000 login/logout cycles",
                                  measured: "not measured in this run", limit: "+0 B", pass: nil))
        }
        ratio("a `.transient` chain in a release build on a 64 MiB thread: time per level at 5,000 levels, against at 100",
              "<= 2.00x", K.chain, L.chainDeep, L.chainShallow, label: "5,000 levels / 100 levels",
              unit: "ns/level", passes: { $0 <= 2 })
        // Informational, no floor: the issue's table has none (the old "cycle detection adds at most 10%").
        ratio("cached resolve inside a `.scoped` factory, against the top level (informational)", "no floor",
              K.isolated, L.inFactory, L.processWide, label: "in .scoped factory / top level", passes: { _ in true })
        targets[targets.count - 1].floor = false
        return targets
    }

    func printTargets(_ targets: [Target], smoke: Bool) {
        print("")
        print("Targets (issue 39's speed floors)\(smoke ? " — SMOKE run: verdicts are meaningless" : ""):")
        for target in targets {
            let verdict = !target.floor ? "INFO" : target.pass.map { $0 ? "PASS" : "FAIL" } ?? "n/a "
            print("\(verdict)  \(target.name): \(target.measured) [target \(target.limit)]")
        }
    }

    // MARK: - JSON

    func writeJSON(to path: String, options: Options, environment: Environment, targets: [Target]) throws {
        struct Row: Codable {
            var scenario: String
            var library: String
            var nsPerOp: Double
            var medianNsPerOp: Double
            var minNsPerOp: Double
            var maxNsPerOp: Double
            var runsNsPerOp: [Double]
            var iterationsPerRun: Int
            var operationsPerIteration: Int
            var ratioToB: Double?
            var ratioToC: Double?
        }
        struct Document: Codable {
            var date: String
            var toolchain: String
            var buildConfiguration: String
            var machine: Machine
            var runs: Int
            var smoke: Bool
            var filter: String?
            var results: [Row]
            var targets: [Target]
            var memory: [MemoryResult]
            var launchMemory: LaunchMemory?
            var verify: String?
        }
        let rows = measurements.map { measurement in
            let (b, c) = ratios(for: measurement)
            return Row(
                scenario: measurement.scenario, library: measurement.library, nsPerOp: measurement.best,
                medianNsPerOp: measurement.median, minNsPerOp: measurement.best, maxNsPerOp: measurement.worst,
                runsNsPerOp: measurement.nanosecondsPerOperation, iterationsPerRun: measurement.iterationsPerRun,
                operationsPerIteration: measurement.operationsPerIteration, ratioToB: b, ratioToC: c)
        }
        let document = Document(
            date: environment.date, toolchain: environment.toolchain,
            buildConfiguration: environment.buildConfiguration, machine: environment.machine, runs: options.runs,
            smoke: options.smoke, filter: options.filter, results: rows, targets: targets, memory: memory, launchMemory: launchMemory,
            verify: verify)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        try encoder.encode(document).write(to: URL(fileURLWithPath: path))
    }
}

// MARK: - Toolchain and machine

struct Machine: Codable {
    var uname: String
    var cpuCount: Int
    var cpuModel: String

    var summary: String { "\(uname); \(cpuCount) CPUs; \(cpuModel)" }

    private static func callUname(_ name: inout utsname) -> Int32 {
        #if canImport(Glibc)
        Glibc.uname(&name)
        #else
        Darwin.uname(&name)
        #endif
    }

    static func current() -> Machine {
        var name = utsname()
        _ = Self.callUname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        let unameString = [field(name.sysname), field(name.nodename), field(name.release), field(name.version), field(name.machine)]
            .joined(separator: " ")
        var model = "unknown"
        if let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let colon = line.firstIndex(of: ":") {
            model = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Machine(uname: unameString, cpuCount: ProcessInfo.processInfo.activeProcessorCount, cpuModel: model)
    }
}

struct Environment {
    var date: String
    var toolchain: String
    var buildConfiguration: String
    var machine: Machine

    static func current(options: Options) -> Environment {
        #if DEBUG
        let configuration = "debug"
        #else
        let configuration = "release"
        #endif
        return Environment(
            date: ISO8601DateFormatter().string(from: Date()),
            toolchain: options.toolchain ?? compiledInCompilerVersion(),
            buildConfiguration: configuration,
            machine: .current())
    }

    /// The compiler that built this binary, as precisely as `#if compiler` can tell.
    static func compiledInCompilerVersion() -> String {
        #if compiler(>=6.4)
        return "Swift compiler >= 6.4 (pass --toolchain \"$(swift --version)\" for the exact string)"
        #elseif compiler(>=6.3.1)
        return "Swift compiler 6.3.x (>= 6.3.1) (compiled-in; pass --toolchain for the exact string)"
        #elseif compiler(>=6.3)
        return "Swift compiler 6.3.0 (compiled-in; pass --toolchain for the exact string)"
        #elseif compiler(>=6.2)
        return "Swift compiler 6.2.x (compiled-in; pass --toolchain for the exact string)"
        #else
        return "Swift compiler < 6.2 (compiled-in; pass --toolchain for the exact string)"
        #endif
    }
}

// MARK: - Formatting

func format(_ nanoseconds: Double) -> String {
    if nanoseconds.isNaN { return "—" }
    if nanoseconds >= 100_000 { return String(format: "%.0f", nanoseconds) }
    if nanoseconds >= 100 { return String(format: "%.1f", nanoseconds) }
    return String(format: "%.2f", nanoseconds)
}

func formatRatio(_ ratio: Double) -> String {
    ratio >= 100 ? String(format: "%.0fx", ratio) : String(format: "%.2fx", ratio)
}

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}

private func lpad(_ text: String, _ width: Int) -> String {
    text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
}

/// 10000 as "10,000".
private func grouped(_ value: Int) -> String {
    let digits = Array(String(value))
    return String(digits.enumerated().flatMap { index, digit in
        index > 0 && (digits.count - index) % 3 == 0 ? [",", digit] : [digit]
    })
}

private func bytes(_ value: Int) -> String {
    value < 0 ? "n/a" : "\(value) B"
}

private func signedBytes(_ value: Int) -> String {
    value > 0 ? "+\(value) B" : "\(value) B"
}

/// Scenario 8's memory figures: heap bytes per registration, registered and resolved once.
struct LaunchMemory: Codable, Sendable {
    var injection: Double
    var injectionSecondPass: Double
    var seed: Double
}
