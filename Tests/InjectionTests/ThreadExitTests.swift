import CInjectionTestSupport
import Foundation
@_spi(Testing) import Injection
import _InjectionPlatform
import Testing

// A thread's state is released when the thread exits, whatever order the process's pthread key
// destructors run in around the library's own (glibc and Darwin run them in key-creation order, and on
// Darwin dyld's thread-local storage goes in one of them), and code that resolves from a destructor
// that runs after the library's still resolves, with its chain, and leaves no state behind. With the state
// goes everything the thread's cache held, each object released once, also while resets, re-registrations
// and container releases race for the same entries.

private final class ExitScoped: Sendable {}
private final class ExitTransient: Sendable {
    let scoped: ExitScoped
    init(scoped: ExitScoped) { self.scoped = scoped }
}
private final class ExitLoop: Sendable {}

private final class Captured: Sendable {}
private final class ExitOuter: Sendable {}

private final class ExitLeaf: Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}
private final class ExitPlain: Sendable {}
private final class ExitWeak: Sendable {}
/// Resolves from its container when it goes: a release under a library lock would deadlock or trap.
private final class ResolvesOnDeinit: @unchecked Sendable {
    unowned let container: InjectionContainer
    let deinits: Counter
    init(_ container: InjectionContainer, _ deinits: Counter) {
        self.container = container
        self.deinits = deinits
    }
    deinit {
        _ = try? container.resolve(ExitPlain.self)
        deinits.increment()
    }
}
private final class ExitWrapper: Sendable {}
private final class ExitR0: Sendable {}
private final class ExitOwner: Sendable {
    let container: InjectionContainer
    init(_ container: InjectionContainer) { self.container = container }
}
private final class FillingTransient: Sendable {}

/// What one destructor saw: which key it belongs to, and whether the thread had a state before and
/// after it resolved, whether resolving worked, and whether a cycle was reported as one.
private struct Sighting: Equatable, CustomStringConvertible {
    var key: Int, stateBefore: Bool, resolved: Bool, cycleReported: Bool, stateAfter: Bool
    var description: String {
        "key \(key): state before \(stateBefore), resolved \(resolved), cycle \(cycleReported), state after \(stateAfter)"
    }
}

nonisolated(unsafe) private var exitContainer: InjectionContainer?
nonisolated(unsafe) private var keyBefore: UInt = 0
nonisolated(unsafe) private var keyAfter: UInt = 0
nonisolated(unsafe) private var sightings: [Sighting] = []
private let sightingsLock = NSLock()

/// Marks, in a key's value, which key a destructor belongs to.
private let beforeMark = 1, afterMark = 2, afterAgainMark = 3

private func resolveFromDestructor(_ value: UnsafeMutableRawPointer) {
    guard let container = exitContainer else { return }
    let mark = Int(bitPattern: value)
    let stateBefore = InjectionProbe.currentThreadHasState
    var resolved = (try? container.resolve(ExitScoped.self)) != nil
    for _ in 0..<5 { resolved = resolved && (try? container.resolve(ExitTransient.self)) != nil }
    var cycleReported = false
    do { _ = try container.resolve(ExitLoop.self) } catch { cycleReported = error.kind == .cycle }
    let sighting = Sighting(
        key: mark, stateBefore: stateBefore, resolved: resolved, cycleReported: cycleReported,
        stateAfter: InjectionProbe.currentThreadHasState)
    sightingsLock.withLock { sightings.append(sighting) }
    // Ask for one more round of destructors: the thread must still read as exiting then.
    if mark == afterMark { test_key_set(keyAfter, UnsafeMutableRawPointer(bitPattern: afterAgainMark)) }
}

@Suite("Thread exit")
struct ThreadExitTests {
    @Test("resolves from pthread key destructors that run before and after the library's own leave no thread state behind")
    func resolvesFromKeyDestructorsOnEitherSide() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // A fresh process: the library's key does not exist until the first resolve below, so one
            // key is made before it and one after it, and their destructors run on either side of its.
            precondition(_injection_thread_state() == nil, "nothing resolved yet in this process")
            keyBefore = test_key_create { resolveFromDestructor($0) }
            let container = InjectionContainer()
            container.register(ExitScoped.self) { ExitScoped() }
            container.register(ExitTransient.self, lifetime: .transient) { ExitTransient(scoped: Inject()) }
            container.register(ExitLoop.self, lifetime: .transient) { _ = try InjectionManager.resolve(ExitLoop.self); return ExitLoop() }
            exitContainer = container
            _ = try container.resolve(ExitScoped.self)  // Creates the library's key.
            keyAfter = test_key_create { resolveFromDestructor($0) }
            let statesBefore = InjectionProbe.liveThreadStates

            test_thread_run_and_join({ _ in
                guard let container = exitContainer else { return }
                for _ in 0..<5 { _ = try? container.resolve(ExitTransient.self) }  // Fills the thread's cache.
                test_key_set(keyBefore, UnsafeMutableRawPointer(bitPattern: beforeMark))
                test_key_set(keyAfter, UnsafeMutableRawPointer(bitPattern: afterMark))
            }, nil, 1 << 20)

            let seen = sightingsLock.withLock { sightings }
            let expected = [
                Sighting(key: beforeMark, stateBefore: true, resolved: true, cycleReported: true, stateAfter: true),
                Sighting(key: afterMark, stateBefore: false, resolved: true, cycleReported: true, stateAfter: false),
                Sighting(key: afterAgainMark, stateBefore: false, resolved: true, cycleReported: true, stateAfter: false),
            ]
            precondition(seen == expected, "destructors saw \(seen), expected \(expected)")
            let statesAfter = InjectionProbe.liveThreadStates
            precondition(statesAfter == statesBefore, "\(statesAfter - statesBefore) thread states outlived their thread")
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("the child process said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }
    }

    @Test("a thread that exits frees what its cache held (transients' registrations and instances)")
    func threadExitFreesCache() throws {
        let container = InjectionContainer()
        weak var weakCaptured: Captured?
        do {
            let captured = Captured()
            weakCaptured = captured
            container.register(ExitOuter.self, lifetime: .transient) { [captured] in _ = captured; return ExitOuter() }
        }
        let done = Gate()
        onSizedStack {  // Returns once the thread has exited, its key destructors run.
            for _ in 0..<5 { _ = try? container.resolve(ExitOuter.self) }
            done.open()
        }
        #expect(done.wait())
        container.register(ExitOuter.self, lifetime: .transient) { ExitOuter() }  // Drops the container's reference.
        #expect(weakCaptured == nil)
    }

    /// A thread exits while its cache holds a container's instance and transient registration: its
    /// state's deinit releases them, so they go with the container.
    @Test("a thread's exit releases the instances and transients' registrations its cache holds")
    func threadExitReleasesCacheEntries() throws {
        weak var weakRegistration: AnyObject?
        weak var weakInstance: ExitWrapper?
        do {
            let container = InjectionContainer()
            container.register(ExitR0.self, lifetime: .transient) { ExitR0() }
            container.register(ExitWrapper.self, lifetime: .scoped) { ExitWrapper() }
            weakRegistration = InjectionProbe.registration(for: ExitR0.self, in: container)
            let exited = Counter()
            let box = ExitOwner(container)
            onThread { [box] in
                for _ in 0..<3 { _ = try? box.container.resolve(ExitR0.self) }
                _ = try? box.container.resolve(ExitWrapper.self)
                #expect(InjectionProbe.threadCacheEntry(for: ExitR0.self, in: box.container) == .factory)
                exited.increment()
            }
            #expect(exited.wait(atLeast: 1))
            weakInstance = try container.resolve(ExitWrapper.self)
            // Only the worker cached ExitR0: once no live thread does, the worker's state was released while the
            // container still registers ExitR0, so its table's entries can go only through the state's deinit.
            #expect(waitUntil { InjectionProbe.threadsCaching(ExitR0.self, in: container) == 0 })
        }
        // The container goes once the worker's closure does (it holds `box`), whenever the thread ends, and its
        // deinit no longer sees the worker's state: only that state's deinit could have released the entries.
        #expect(waitUntil { weakRegistration == nil && weakInstance == nil })
    }

    /// Threads fill their caches with more than 48 entries of each of three containers (instances, and
    /// transients' registrations, some resolved from inside a transient's factory), then exit, while the
    /// containers are released on another thread at the same moment: the thread's exit and the containers'
    /// release race for the entries, and each object is released exactly once.
    @Test("threads whose caches hold many entries exit while their containers are released: each entry released once")
    func threadExitRacesContainerRelease() throws {
        let live = LiveTokens(), registrations = LiveTokens()
        for round in 0..<8 {
            let slots = (0..<3).map { _ in ContainerSlot(InjectionContainer()) }
            for (c, slot) in slots.enumerated() {
                let container = slot.value!
                for i in 0..<60 {
                    let key: any STKeyed.Type = stKeys[c * 60 + i]
                    stRegister(key, index: c * 60 + i, serial: round, in: container,
                               lifetime: i % 4 == 0 ? .transient : .scoped, live: live, registrations: registrations)
                }
                let token = CountedToken(-3, serial: round, live: registrations)
                // A transient whose factory resolves the rest of its container's keys.
                container.register(FillingTransient.self, lifetime: .transient) { [unowned container] in
                    _ = token
                    for i in 30..<60 { let key: any STKeyed.Type = stKeys[c * 60 + i]; _ = try? stResolve(key, in: container) }
                    return FillingTransient()
                }
            }
            let filled = Barrier(count: 4)
            let exited = Counter()
            for t in 0..<3 {
                let thread = Thread {
                    for (c, slot) in slots.enumerated() {
                        guard let container = slot.value else { continue }
                        for i in 0..<30 {
                            let key: any STKeyed.Type = stKeys[c * 60 + i]
                            _ = try? stResolve(key, in: container)
                            _ = try? stResolve(key, in: container)
                        }
                        if t != 0 { container.reset() }  // Instances evicted, transients stay.
                        for _ in 0..<3 { _ = try? container.resolve(FillingTransient.self) }
                    }
                    filled.arrive()
                    exited.increment()
                }
                thread.start()
            }
            filled.arrive()
            // The containers go now, as the threads exit.
            for slot in slots.shuffled() { _ = slot.take() }
            #expect(exited.wait(atLeast: 3))
        }
        #expect(waitUntil { live.alive == 0 && registrations.alive == 0 },
                "\(live.alive) instances, \(registrations.alive) registrations still alive")
    }

    /// Short-lived threads fill their caches (scoped instances, transients, an instance whose deinit
    /// resolves) and exit, while another thread resets, registers again and unregisters the same keys: no
    /// hang, no crash, every resolve typed right, and every instance released, outside every lock.
    @Test("threads exit while resets and re-registrations evict their cache entries")
    func threadsExitWhileResetsEvict() {
        let container = InjectionContainer()
        let deinits = Counter(), built = Counter()
        @Sendable func registerAll() {
            container.register(ExitLeaf.self) { ExitLeaf(serial: built.increment()) }
            container.register(ExitPlain.self, lifetime: .transient) { ExitPlain() }
            container.register(ResolvesOnDeinit.self) { [unowned container] in ResolvesOnDeinit(container, deinits) }
            container.register(ExitWeak.self, lifetime: .weak) { ExitWeak() }
        }
        registerAll()
        let stop = AtomicWord(0)
        let changes = Gate()
        onThread {
            var round = 0
            while stop.value == 0 {
                switch round % 4 {
                case 0: container.reset()
                case 1: registerAll()
                case 2:
                    container.unregister(ResolvesOnDeinit.self)
                    container.register(ResolvesOnDeinit.self) { [unowned container] in ResolvesOnDeinit(container, deinits) }
                default: container.reset { registerAll() }
                }
                round += 1
            }
            changes.open()
        }
        let wrong = Collector<String>()
        var finished = true
        for _ in 0..<25 {
            finished = runOnThreads(4) { _ in
                for _ in 0..<3 {
                    if let leaf = try? container.resolve(ExitLeaf.self), leaf.serial <= 0 { wrong.append("leaf #\(leaf.serial)") }
                    _ = try? container.resolve(ExitPlain.self)
                    _ = try? container.resolve(ResolvesOnDeinit.self)
                    _ = try? container.resolve(ExitWeak.self)
                }
            } && finished
            if !finished { break }
        }
        stop.value = 1
        #expect(changes.wait())
        #expect(finished, "a thread hung")
        #expect(wrong.values == [])
        container.reset()
        container.unregister(ResolvesOnDeinit.self)
        // A thread's cache goes when the thread exits, which may come after `runOnThreads` returned (it waits for
        // the bodies): a cache a thread is tearing down is out of the evictions' reach, and lets its entries go
        // as the thread ends (under ThreadSanitizer, a while later).
        let stillAlive = { container.liveInstancesFromPreviousScopes().filter { $0.contains("ResolvesOnDeinit") } }
        #expect(waitUntil { stillAlive().isEmpty }, "\(stillAlive())")
    }
}
