import Foundation
import Injection
import Testing

// Factories run outside every lock: while one runs (here, blocked), other threads resolve cached types,
// register, unregister and reset without waiting for it. Threads outside structured concurrency see the
// process-wide container, so these tests call an explicit container.

@Suite("Factories outside locks")
struct FactoriesOutsideLocksTests {
    @Test("a slow factory does not block resolving other, cached types")
    func slowFactoryDoesNotBlockOthers() throws {
        let container = InjectionContainer()
        let release = Gate(), started = Gate(), done = Gate(), timedOut = Counter()
        container.register((any Clock).self) { SystemClock() }
        container.register((any API).self) {
            started.open()
            if !release.wait() { timedOut.increment() }  // Released only after the work below: it waited for us.
            return LiveAPI()
        }
        let clock = try container.resolve((any Clock).self)
        onThread { _ = try? container.resolve((any API).self); done.open() }
        #expect(started.wait())
        // The API factory is blocked; everything else must still work on this thread.
        #expect(try container.resolve((any Clock).self) === clock)
        container.register(Formatter.self) { Formatter() }
        #expect(throws: Never.self) { try container.resolve(Formatter.self) }
        release.open()
        #expect(done.wait())
        #expect(timedOut.value == 0, "the work above waited for the blocked factory until its gate timed out")
    }

    @Test("register, unregister and reset never wait for a running factory")
    func mutationsDoNotWaitForFactories() throws {
        let container = InjectionContainer()
        let release = Gate(), started = Gate(), done = Gate(), timedOut = Counter()
        container.register((any API).self) {
            started.open()
            if !release.wait() { timedOut.increment() }  // Released only after the work below: it waited for us.
            return LiveAPI()
        }
        onThread { _ = try? container.resolve((any API).self); done.open() }
        #expect(started.wait())
        // Each of these would hang until the factory's gate timed out if it waited for the factory.
        container.reset()
        container.register((any API).self) { LiveAPI(name: "replacement") }
        #expect(try container.resolve((any API).self).name == "replacement")
        container.unregister((any API).self)
        container.reset { container.register((any API).self) { LiveAPI(name: "next") } }
        #expect(try container.resolve((any API).self).name == "next")
        release.open()
        #expect(done.wait())
        #expect(timedOut.value == 0, "the work above waited for the blocked factory until its gate timed out")
    }
}
