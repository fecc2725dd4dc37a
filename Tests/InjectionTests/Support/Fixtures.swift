import CInjectionTestSupport
import Foundation
import _InjectionPlatform
@_spi(Testing) import InjectionTesting

/// How long a test waits, by default, for another thread or task before it records a failure. Only a hang
/// should run it out: CI runs the suite in parallel on two cores, under ThreadSanitizer too, where work that
/// takes 7 s alone took 35 s, and async tests report 100 s behind synchronous ones that block the pool.
let waitLimit: Double = 120

// MARK: - Services used across the suite

protocol API: AnyObject, Sendable { var name: String { get } }
final class LiveAPI: API { let name: String; init(name: String = "live") { self.name = name } }

protocol Clock: AnyObject, Sendable {}
final class SystemClock: Clock {}

final class Formatter: Sendable {}

final class ViewModel: Sendable {
    let api: any API
    let clock: any Clock
    init(api: any API = Inject(), clock: any Clock = Inject()) {
        self.api = api
        self.clock = clock
    }
}

final class Detail: Sendable {
    let id: String
    init(id: String) { self.id = id }
}

final class Session: Sendable {
    let user: String
    let serial: Int
    init(user: String, serial: Int = 0) {
        self.user = user
        self.serial = serial
    }
}

/// Holds injected services in immutable properties, both spellings.
final class Screen: Sendable {
    let api = Inject((any API).self)
    let sameAPI: any API = Inject()
}

// MARK: - Shared by the reset tests

/// An instance that says which factory built it: its type's name, the factory's tag, its build number.
final class Built: Sendable {
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

enum ResetTop: InjectionKey { typealias Value = Built }
enum ResetMiddle: InjectionKey { typealias Value = Built }
enum ResetBottom: InjectionKey { typealias Value = Built }

// MARK: - Shared by the postConstruction and in-flight tests

/// Holds a `Part`, which a factory resolves for it.
final class Holder: Sendable {
    let part: Part
    init(part: Part) { self.part = part }
}
/// Counts its deinits; `postConstruction` marks it constructed.
final class Part: @unchecked Sendable {
    var isConstructed = false
    let deinits: Counter
    init(deinits: Counter) { self.deinits = deinits }
    deinit { deinits.increment() }
}

// MARK: - Shared by the lifetime and InjectLazy tests

/// Counts how often it was built.
final class Expensive: Sendable {
    init(runs: Counter) { runs.increment() }
}

// MARK: - Helpers

/// A thread-safe counter for how often factories run, which a thread can also wait on.
final class Counter: @unchecked Sendable {  // Its state: under `condition`.
    private let condition = NSCondition()
    private var count = 0
    var value: Int {
        condition.lock(); defer { condition.unlock() }
        return count
    }
    @discardableResult func increment() -> Int {
        condition.lock(); defer { condition.unlock() }
        count += 1
        condition.broadcast()
        return count
    }
    /// Blocks until the count reaches `target`; `false` if `seconds` passed first.
    @discardableResult func wait(atLeast target: Int, seconds: Double = waitLimit) -> Bool {
        condition.lock(); defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while count < target { if !condition.wait(until: deadline) { return count >= target } }
        return true
    }
}

/// A one-shot signal between threads, with a timeout so a broken container fails instead of hanging.
final class Gate: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func open() { semaphore.signal() }
    /// Returns `false` if `seconds` passed first.
    @discardableResult func wait(seconds: Double = waitLimit) -> Bool {
        semaphore.wait(timeout: .now() + seconds) == .success
    }
}

/// Runs `body` on `count` real threads that start together; returns when all are done, or `false` on timeout.
@discardableResult
func runOnThreads(_ count: Int, timeout: Double = waitLimit, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            start.wait()
            body(index)
            group.leave()
        }
        thread.start()
    }
    for _ in 0..<count { start.signal() }
    return group.wait(timeout: .now() + timeout) == .success
}

/// Re-checks `condition` until it holds, for a state only the library sees (read through `InjectionProbe`),
/// such as another thread now waiting for a build; `false` if `seconds` passed first.
@discardableResult
func waitUntil(seconds: Double = waitLimit, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while !condition() {
        if Date() >= deadline { return condition() }
        usleep(50)  // Not a spin: on two cores the thread that makes `condition` true needs one.
    }
    return true
}

/// Runs `body` on a new thread and returns immediately.
func onThread(_ body: @escaping @Sendable () -> Void) {
    Thread { body() }.start()
}

/// Runs `body` on a new thread with a stack of `sizedStack` and waits for it without blocking a thread of
/// the tasks' pool: for a test whose factory blocks until a task it started has run (blocking a pool thread
/// for that can deadlock when parallel tests hold the pool's other threads).
func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = sizedStack
        thread.start()
    }
}

/// Collects values from many threads.
final class Collector<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Value] = []
    func append(_ value: Value) { lock.withLock { items.append(value) } }
    var values: [Value] { lock.withLock { items } }
}

/// An integer threads read and write without a lock, for spin-waits between two threads (acquire loads,
/// release stores; through the C test support, as `Synchronization.Atomic` needs macOS 15).
final class AtomicWord: @unchecked Sendable {  // Self-synchronised.
    private let word = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
    init(_ value: Int) { word.initialize(to: Int64(value)) }
    deinit { word.deallocate() }
    var value: Int {
        get { Int(test_atomic_load(word)) }
        set { test_atomic_store(word, Int64(newValue)) }
    }
}

/// A gate that, once opened, stays open for every waiter.
final class Latch: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false
    func open() { condition.lock(); isOpen = true; condition.broadcast(); condition.unlock() }
    /// Returns `false` if `seconds` passed first.
    @discardableResult func wait(seconds: Double = waitLimit) -> Bool {
        condition.lock(); defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !isOpen { if !condition.wait(until: deadline) { return isOpen } }
        return true
    }
}

/// The stack size of the threads `onSizedStack` starts: 8 MiB, as the library gives `verify()`'s workers.
let sizedStack = 8 << 20

/// Runs `body` on a new thread with an 8 MiB stack and returns its result once that thread has exited.
///
/// For tests that resolve deep graphs: Swift Testing runs tests on threads that have 512 KiB of stack on
/// Apple platforms (and in CI's pass with `ulimit -s 512`), and a debug build uses about 11 KiB per level.
func onSizedStack<Result>(_ stackSize: Int = sizedStack, _ body: @escaping () -> Result) -> Result {
    var result: Result?
    let run = SizedStackRun { result = body() }
    test_thread_run_and_join({ context in
        Unmanaged<SizedStackRun>.fromOpaque(context!).takeUnretainedValue().run()
    }, Unmanaged.passUnretained(run).toOpaque(), UInt(stackSize))
    return withExtendedLifetime(run) { result! }
}

/// The body of one `onSizedStack` call; joining its thread orders its writes before the caller's reads.
private final class SizedStackRun: @unchecked Sendable {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// One thread with an 8 MiB stack that runs closures on request, for tests that resolve deep graphs and
/// resolve on one thread several times (`onSizedStack` starts a new thread each time).
final class SizedStackThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var job: (() -> Void)?
    private var isStopped = false

    init() {
        _injection_thread_start({ context in
            Unmanaged<SizedStackThread>.fromOpaque(context!).takeRetainedValue().serve()
            return nil
        }, Unmanaged.passRetained(self).toOpaque(), sizedStack)
    }

    private func serve() {
        condition.lock()
        defer { condition.unlock() }
        while true {
            while job == nil && !isStopped { condition.wait() }
            guard let work = job else { return }
            condition.unlock()
            work()
            condition.lock()
            job = nil
            condition.broadcast()
        }
    }

    /// Runs `body` on the thread and returns what it returns or throws.
    func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        try withoutActuallyEscaping(body) { body in
            var outcome: Swift.Result<Result, any Error>?
            condition.lock()
            job = { outcome = Swift.Result { try body() } }
            condition.broadcast()
            while job != nil { condition.wait() }
            condition.unlock()
            return try outcome!.get()
        }
    }

    /// Ends the thread once it is idle.
    func stop() {
        condition.lock()
        isStopped = true
        condition.broadcast()
        condition.unlock()
    }
}

/// What `InjectionManager.diagnosticsHandler` reported during ``withRecordedDiagnostics(_:)``.
final class DiagnosticLines: @unchecked Sendable {  // Its state: under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
    /// The lines about `marker`: tests of other suites may report their own types meanwhile.
    func about(_ marker: String) -> [String] { all.filter { $0.contains(marker) } }
}

/// Serializes the tests that install the process-wide handler, whichever suite they are in.
private let diagnosticsHandlerTurn = NSLock()

/// Runs `body` with `InjectionManager.diagnosticsHandler` recording into the lines it gets, then restores the
/// handler. Tests that record take turns, so one never installs its recorder over another's.
func withRecordedDiagnostics<Result>(_ body: (DiagnosticLines) throws -> Result) rethrows -> Result {
    diagnosticsHandlerTurn.lock()
    defer { diagnosticsHandlerTurn.unlock() }
    let lines = DiagnosticLines()
    let previous = InjectionManager.diagnosticsHandler
    InjectionManager.diagnosticsHandler = { lines.append($0) }
    defer { InjectionManager.diagnosticsHandler = previous }
    return try body(lines)
}

/// A service with an async factory, for the async tests.
protocol AsyncStore: AnyObject, Sendable { var serial: Int { get } }

final class LiveAsyncStore: AsyncStore {
    let serial: Int
    init(serial: Int) { self.serial = serial }
    /// Opens a store: suspends, like a database open would.
    static func open(runs: Counter) async -> LiveAsyncStore {
        let serial = runs.increment()
        await Task.yield()
        return LiveAsyncStore(serial: serial)
    }
}
