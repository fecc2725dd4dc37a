// A small timing harness: monotonic clock, blackhole, calibration, warm-up, best-of-N, two threads.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMallocStats
import Foundation
import Synchronization

// MARK: - Clock and blackhole

/// Nanoseconds on the monotonic clock.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// Where every loop's checksum goes, so the optimizer must compute it (and so do the work it sums).
private let sink = Atomic<Int>(0)

/// Consumes a checksum. Called once per measured loop, never per operation.
@inline(never)
func blackHole(_ value: Int) {
    sink.add(value, ordering: .relaxed)
}

/// The sum of every checksum, printed at the end so the sink itself is observable.
func sinkValue() -> Int {
    sink.load(ordering: .relaxed)
}

// MARK: - Options

struct Options: Sendable {
    /// Timed runs per row; the best is reported.
    var runs = 7
    /// One short iteration of everything, for CI: no calibration, no warm-up, one run.
    var smoke = false
    /// Only scenarios whose key or title contains this (case-insensitive).
    var filter: String?
    var jsonPath: String?
    /// `swift --version`, if the caller passes it; otherwise the compiled-in compiler version is reported.
    var toolchain: String?

    /// A run should take about this long once calibrated (the brief: ~50–100 ms).
    var targetRunNanoseconds: UInt64 = 75_000_000

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var iterator = arguments.dropFirst().makeIterator()
        func value(for flag: String) -> String {
            guard let value = iterator.next() else { usage("\(flag) needs a value") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--smoke": options.smoke = true
            case "--runs":
                guard let runs = Int(value(for: argument)), runs > 0 else { usage("--runs needs a positive number") }
                options.runs = runs
            case "--filter": options.filter = value(for: argument)
            case "--json": options.jsonPath = value(for: argument)
            case "--toolchain": options.toolchain = value(for: argument)
            case "-h", "--help": usage(nil)
            default: usage("unknown argument \(argument)")
            }
        }
        if options.smoke { options.runs = 1 }
        return options
    }

    private static func usage(_ problem: String?) -> Never {
        if let problem { FileHandle.standardError.write(Data("error: \(problem)\n".utf8)) }
        print("""
        usage: InjectionBenchmarks [--smoke] [--runs N] [--filter NAME] [--json PATH] [--toolchain "$(swift --version)"]
          --smoke        one short iteration of everything (CI); numbers are meaningless
          --runs N       timed runs per row, best reported (default 7)
          --filter NAME  only scenarios whose key or title contains NAME, e.g. cached, transient, threads,
                         isolated, login, register, memory, launch, container-resolve, reset-singletons, chain
          --json PATH    also write the results, toolchain and machine as JSON
          --toolchain S  the toolchain string to record (default: the compiler version compiled in)
        Build in release for real numbers: swift run -c release --package-path Benchmarks InjectionBenchmarks
        """)
        exit(problem == nil ? 0 : 2)
    }
}

// MARK: - Measuring

/// One timed call: how long the operations took, and their checksum.
struct Timing {
    var nanoseconds: UInt64
    var checksum: Int
}

/// Times `body(iterations)` on the calling thread.
@inline(__always)
func timed(_ iterations: Int, _ body: (Int) -> Int) -> Timing {
    let start = monotonicNanoseconds()
    let checksum = body(iterations)
    let end = monotonicNanoseconds()
    return Timing(nanoseconds: end &- start, checksum: checksum)
}

/// The result of one row: ns per operation in each timed run.
struct Measurement: Sendable {
    var scenario: String
    var library: String
    /// Iterations per run, and operations per iteration (e.g. 10,000 registrations per iteration).
    var iterationsPerRun: Int
    var operationsPerIteration: Int
    var nanosecondsPerOperation: [Double]

    var best: Double { nanosecondsPerOperation.min() ?? .nan }
    var worst: Double { nanosecondsPerOperation.max() ?? .nan }
    var median: Double { InjectionBenchmarks.median(of: nanosecondsPerOperation) }
    /// (worst − best) / best.
    var spread: Double { best > 0 ? (worst - best) / best : 0 }
}

/// The median of `values`; NaN if there are none.
func median(of values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// One row waiting to be measured: what ``measureInterleaved(_:options:)`` takes.
struct PendingRow {
    let scenario: String
    let library: String
    var operationsPerIteration = 1
    var maximumIterations = 1 << 30
    var smokeIterations = 100
    let run: (Int) -> Timing
}

/// Measures `rows` (the rows of one scenario) with their timed runs interleaved.
///
/// Each row is calibrated so one run takes about `options.targetRunNanoseconds` (calibration doubles as
/// the first warm-up), then warmed up once at that size. Then come `options.runs` rounds; each round
/// times every row once, starting from a different row each round. A slow phase of the machine (this
/// VM's speed drifts by up to 2x over seconds) then lands on every row of the scenario alike, instead of
/// on whichever row happened to be measured during it, so ratios within a scenario stay meaningful.
/// Each row still reports its best run, median and spread. `run(iterations)` does the timing itself
/// (see ``timed(_:_:)``) so that setup and teardown, and thread start-up, stay out of the figure.
func measureInterleaved(_ rows: [PendingRow], options: Options) -> [Measurement] {
    var results = rows.map {
        Measurement(
            scenario: $0.scenario, library: $0.library, iterationsPerRun: 0,
            operationsPerIteration: $0.operationsPerIteration, nanosecondsPerOperation: [])
    }
    func record(_ timing: Timing, row index: Int) {
        blackHole(timing.checksum)
        let operations = Double(results[index].iterationsPerRun) * Double(rows[index].operationsPerIteration)
        results[index].nanosecondsPerOperation.append(Double(timing.nanoseconds) / operations)
    }
    if options.smoke {
        for (index, row) in rows.enumerated() {
            results[index].iterationsPerRun = min(row.smokeIterations, row.maximumIterations)
            record(row.run(results[index].iterationsPerRun), row: index)
        }
        return results
    }
    for (index, row) in rows.enumerated() {
        // Calibration doubles as the first warm-up: grow until a run takes ≥ 1/8 of the target.
        var iterations = 1
        var timing = row.run(iterations)
        blackHole(timing.checksum)
        while timing.nanoseconds < options.targetRunNanoseconds / 8 && iterations < row.maximumIterations {
            iterations = min(iterations * 4, row.maximumIterations)
            timing = row.run(iterations)
            blackHole(timing.checksum)
        }
        let perIteration = Double(max(timing.nanoseconds, 1)) / Double(iterations)
        iterations = max(1, min(row.maximumIterations, Int(Double(options.targetRunNanoseconds) / perIteration)))
        // Warm-up at the final size, not recorded.
        blackHole(row.run(iterations).checksum)
        results[index].iterationsPerRun = iterations
    }
    for round in 0..<options.runs {
        for offset in 0..<rows.count {
            let index = (round + offset) % rows.count
            // Each run starts from a settled heap: otherwise the millions of small chunks one row frees
            // are merged and sorted by glibc during the next row's run (its fastbins are consolidated by
            // the next larger request), which made (c2)'s `register` up to 100 times slower when it ran
            // right after Injection's, and would bill any row for its neighbour's garbage.
            cmallocstats_settle_heap()
            record(rows[index].run(results[index].iterationsPerRun), row: index)
        }
    }
    return results
}

// MARK: - Two threads

/// Runs `body(iterations / 2)` on each of two new threads, released together by a barrier.
///
/// Each thread reads the clock after the barrier and after its loop; the figure is wall time from the
/// first start to the last end, so thread creation and joining are not counted. With `iterations` total
/// operations the harness reports aggregate ns/op = wall time / total operations.
func onTwoThreads(_ iterations: Int, _ body: @escaping @Sendable (Int) -> Int) -> Timing {
    let perThread = max(1, iterations / 2)
    let shared = TwoThreadRun()
    for index in 0..<2 {
        let thread = Thread {
            pinToProcessor(index)
            shared.arriveAndWait()
            let start = monotonicNanoseconds()
            let checksum = body(perThread)
            let end = monotonicNanoseconds()
            shared.finish(index: index, start: start, end: end, checksum: checksum)
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    shared.waitForBoth()
    return shared.timing
}

/// The barrier and results of one two-thread run.
private final class TwoThreadRun: @unchecked Sendable {
    private let barrier = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)
    private let condition = NSCondition()
    private var starts: [UInt64] = [0, 0]
    private var ends: [UInt64] = [0, 0]
    private var checksum = 0
    private var finished = 0

    init() {
        let result = pthread_barrier_init(barrier, nil, 2)
        precondition(result == 0, "pthread_barrier_init failed with \(result)")
    }

    deinit {
        pthread_barrier_destroy(barrier)
        barrier.deallocate()
    }

    func arriveAndWait() {
        _ = pthread_barrier_wait(barrier)
    }

    func finish(index: Int, start: UInt64, end: UInt64, checksum: Int) {
        condition.lock()
        starts[index] = start
        ends[index] = end
        self.checksum &+= checksum
        finished += 1
        condition.signal()
        condition.unlock()
    }

    func waitForBoth() {
        condition.lock()
        while finished < 2 { condition.wait() }
        condition.unlock()
    }

    var timing: Timing {
        condition.lock()
        defer { condition.unlock() }
        return Timing(nanoseconds: ends.max()! &- starts.min()!, checksum: checksum)
    }
}

/// Pins the calling thread to processor `index` (modulo the processors available), where the platform
/// allows it (Linux). The two threads of a two-thread row then run on different cores, so every library's
/// row measures two threads truly resolving at once; otherwise the scheduler may run them one after the
/// other on one core, which makes a "2 threads" figure a single-thread one.
func pinToProcessor(_ index: Int) {
    _ = cmallocstats_pin_thread(Int32(index))
}

// MARK: - A thread of its own

/// Runs `body` on a new thread with a stack of `stackSize` bytes and returns its timing; the thread's
/// start and end stay out of the figure (`body` reads the clock itself, e.g. with ``timed(_:_:)``).
/// Checks, where the platform tells (Linux), that the thread really got at least that much stack.
func onNewThread(stackSize: Int, _ body: @escaping @Sendable () -> Timing) -> Timing {
    let result = ThreadResult()
    let thread = Thread {
        let size = cmallocstats_thread_stack_size()
        precondition(size == 0 || size >= stackSize, "asked for a \(stackSize >> 10) KiB stack, got \(size >> 10) KiB")
        result.set(body())
    }
    thread.stackSize = stackSize
    thread.start()
    return result.wait()
}

/// The timing a thread of ``onNewThread(stackSize:_:)`` hands back.
private final class ThreadResult: @unchecked Sendable {  // `timing`: under `condition`.
    private let condition = NSCondition()
    private var timing: Timing?

    func set(_ timing: Timing) {
        condition.lock()
        self.timing = timing
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> Timing {
        condition.lock()
        defer { condition.unlock() }
        while timing == nil { condition.wait() }
        return timing!
    }
}

// MARK: - Memory

/// Heap and resident memory at one moment.
struct MemorySnapshot: Sendable, Codable {
    /// Bytes malloc has handed out and not had back (glibc `mallinfo2().uordblks`); -1 where unavailable.
    var heapInUseBytes: Int
    /// Resident set size from /proc/self/statm, in bytes; -1 where unavailable.
    var residentBytes: Int

    static func now() -> MemorySnapshot {
        let heap = Int(cmallocstats_heap_in_use())
        return MemorySnapshot(heapInUseBytes: heap, residentBytes: residentBytes())
    }

    private static func residentBytes() -> Int {
        // statm: size resident shared text lib data dt, in pages.
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return -1 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return -1 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
