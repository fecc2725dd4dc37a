import CInjectionTestSupport
import Foundation
@_spi(Testing) import Injection
import _InjectionPlatform
import Testing

// A thread's state is released when the thread exits, whatever order the process's pthread key
// destructors run in around the library's own (glibc and Darwin run them in key-creation order, and on
// Darwin dyld's thread-local storage goes in one of them), and code that resolves from a destructor
// that runs after the library's still resolves, with its chain, and leaves no state behind.

private final class ExitScoped: Sendable {}
private final class ExitTransient: Sendable {
    let scoped: ExitScoped
    init(scoped: ExitScoped) { self.scoped = scoped }
}
private final class ExitLoop: Sendable {}

private final class Captured: Sendable {}
private final class PinOuter: Sendable {}

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

    @Test("a thread that exits frees what its cache held (registrations and instance copies)")
    func threadExitFreesCache() throws {
        let container = InjectionContainer()
        weak var weakCaptured: Captured?
        do {
            let captured = Captured()
            weakCaptured = captured
            container.register(PinOuter.self, lifetime: .transient) { [captured] in _ = captured; return PinOuter() }
        }
        let done = Gate()
        onSizedStack {  // Returns once the thread has exited, its key destructors run.
            for _ in 0..<5 { _ = try? container.resolve(PinOuter.self) }
            done.open()
        }
        #expect(done.wait())
        container.register(PinOuter.self, lifetime: .transient) { PinOuter() }  // Drops the container's reference.
        #expect(weakCaptured == nil)
    }
}
