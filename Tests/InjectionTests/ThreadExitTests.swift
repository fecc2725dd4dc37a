import CInjectionTestSupport
import Foundation
@_spi(Testing) import InjectionTesting
import _InjectionPlatform
import Testing

// A thread's state is released when the thread exits, whatever order the process's pthread key
// destructors run in around the library's own (glibc and Darwin run them in key-creation order, and on
// Darwin dyld's thread-local storage goes in one of them), and code that resolves from a destructor
// that runs after the library's still resolves, with its chain, and leaves no state behind. A thread that
// exits keeps nothing it resolved alive: each object is released once, also while resets, re-registrations
// and container releases race with the threads' exits.

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

            test_thread_run_and_join({ _ in
                guard let container = exitContainer else { return }
                for _ in 0..<5 { _ = try? container.resolve(ExitTransient.self) }  // Runs factories on this thread.
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
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("the child process said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }
    }

    @Test("a thread that resolved a transient and exited keeps nothing of its registration alive")
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

    /// Threads resolve more than 48 keys of each of three containers (instances, and transients, some
    /// resolved from inside a transient's factory), then exit, while the containers are released on another
    /// thread at the same moment: the threads' exits and the containers' release race, and each object is
    /// released exactly once.
    @Test("threads that resolved many keys exit while their containers are released: each instance and registration released once")
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

    /// Short-lived threads resolve scoped instances, transients and an instance whose deinit resolves, and
    /// exit, while another thread resets, registers again and unregisters the same keys: no
    /// hang, no crash, every resolve typed right, and every instance released, outside every lock.
    @Test("threads exit while resets and re-registrations evict what they resolved")
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
        // A thread may still hold an instance it resolved until it ends, which may come after `runOnThreads`
        // returned (it waits for the bodies; under ThreadSanitizer, a while later).
        let stillAlive = { container.liveInstancesFromPreviousScopes().filter { $0.contains("ResolvesOnDeinit") } }
        #expect(waitUntil { stillAlive().isEmpty }, "\(stillAlive())")
    }
}
