import Foundation
import Injection
import Testing

/// Threads outside structured concurrency see the process-wide container, so these tests call an
/// explicit container; factories still resolve their own dependencies from the container running them.
@Suite("Thread safety")
struct ConcurrencyTests {
    @Test("8 threads racing the first resolve of a slow scoped factory build it once")
    func racingFirstResolveBuildsOnce() throws {
        let container = InjectionContainer()
        let runs = Counter()
        container.register((any API).self) {
            runs.increment()
            Thread.sleep(forTimeInterval: 0.1)
            return LiveAPI()
        }
        let results = Collector<ObjectIdentifier>()
        let finished = runOnThreads(8) { _ in
            let api = try! container.resolve((any API).self)
            results.append(ObjectIdentifier(api))
        }
        #expect(finished)
        #expect(runs.value == 1)
        #expect(results.values.count == 8)
        #expect(Set(results.values).count == 1)
    }

    @Test("a slow factory does not block resolving other, cached types")
    func slowFactoryDoesNotBlockOthers() throws {
        let container = InjectionContainer()
        let release = Gate(), started = Gate(), done = Gate()
        container.register((any Clock).self) { SystemClock() }
        container.register((any API).self) {
            started.open()
            release.wait()
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
    }

    @Test("register, unregister and reset never wait for a running factory")
    func mutationsDoNotWaitForFactories() throws {
        let container = InjectionContainer()
        let release = Gate(), started = Gate(), done = Gate()
        container.register((any API).self) {
            started.open()
            release.wait()
            return LiveAPI()
        }
        onThread { _ = try? container.resolve((any API).self); done.open() }
        #expect(started.wait())
        // Each of these would hang until the 10 s timeout if it waited for the factory.
        container.resetCurrentContainer()
        container.register((any API).self) { LiveAPI(name: "replacement") }
        #expect(try container.resolve((any API).self).name == "replacement")
        container.unregister((any API).self)
        container.resetCurrentContainer { container.register((any API).self) { LiveAPI(name: "next") } }
        #expect(try container.resolve((any API).self).name == "next")
        release.open()
        #expect(done.wait())
    }

    @Test("a resolve in flight across a reset never puts its instance in the new scope")
    func inFlightResolveAcrossReset() throws {
        let container = InjectionContainer()
        let release = Gate(), started = Gate(), done = Gate()
        let serial = Counter()
        container.register(Session.self) {
            let number = serial.increment()
            if number == 1 {
                started.open()
                release.wait()
            }
            return Session(user: "u", serial: number)
        }
        let oldSession = Collector<Session>()
        onThread {
            oldSession.append(try! container.resolve(Session.self))
            done.open()
        }
        #expect(started.wait())
        container.resetCurrentContainer()
        release.open()
        #expect(done.wait())
        // The in-flight caller got the old-scope instance; the new scope builds its own.
        #expect(oldSession.values.map(\.serial) == [1])
        let newSession = try container.resolve(Session.self)
        #expect(newSession.serial == 2)
        #expect(try container.resolve(Session.self) === newSession)
    }

    @Test("threads waiting for a build abandoned by a reset build in the new scope")
    func waitersOfAbandonedBuildRetry() throws {
        let container = InjectionContainer()
        let release = Gate(), started = Gate()
        let serial = Counter()
        container.register(Session.self) {
            let number = serial.increment()
            if number == 1 { started.open(); release.wait() }
            return Session(user: "u", serial: number)
        }
        let results = Collector<Int>()
        onThread { results.append(try! container.resolve(Session.self).serial) }
        #expect(started.wait())
        let waiterDone = Gate()
        onThread { results.append(try! container.resolve(Session.self).serial); waiterDone.open() }
        Thread.sleep(forTimeInterval: 0.05)  // Let the second thread start waiting (the test holds either way).
        container.resetCurrentContainer()
        #expect(waiterDone.wait())
        release.open()
        let current = try container.resolve(Session.self)
        #expect(current.serial == 2)
        #expect(serial.value == 2)
    }

    @Test("resetCurrentContainer { } is atomic as seen from other threads")
    func transactionIsAtomic() throws {
        let container = InjectionContainer()
        let built = Collector<String>()
        container.register(Session.self) { built.append("a"); return Session(user: "a") }
        _ = try container.resolve(Session.self)
        let stop = Counter()
        let seen = Collector<String>()
        let hammer = Gate()
        onThread {
            while stop.value == 0 { seen.append(try! container.resolve(Session.self).user) }
            hammer.open()
        }
        Thread.sleep(forTimeInterval: 0.02)
        container.resetCurrentContainer {
            Thread.sleep(forTimeInterval: 0.05)  // A non-atomic reset would let the hammer rebuild "a" here.
            container.register(Session.self) { built.append("b"); return Session(user: "b") }
        }
        Thread.sleep(forTimeInterval: 0.02)
        stop.increment()
        #expect(hammer.wait())
        #expect(built.values == ["a", "b"])
        let users = seen.values
        #expect(users.first == "a")
        #expect(users.last == "b")
        // Once "b" shows up, "a" never comes back.
        if let firstB = users.firstIndex(of: "b") { #expect(!users[firstB...].contains("a")) }
    }

    @Test("resolves racing with resets and registrations stay consistent")
    func resolvesRaceWithMutations() {
        let container = InjectionContainer()
        container.register((any API).self) { LiveAPI() }
        container.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        container.register(ViewModel.self) { ViewModel() }
        let clock = try! container.resolve((any Clock).self)
        let failures = Counter()
        let finished = runOnThreads(4) { index in
            for iteration in 0..<2_000 {
                switch (index, iteration % 50) {
                case (0, 0): container.resetCurrentContainer()
                case (1, 0): container.register((any API).self) { LiveAPI(name: "re") }
                case (2, 0): container.resetCurrentContainer { container.register(Formatter.self) { Formatter() } }
                default:
                    let viewModel = try! container.resolve(ViewModel.self)
                    if viewModel.clock !== clock { failures.increment() }
                }
            }
        }
        #expect(finished)
        #expect(failures.value == 0)
    }

    @Test("a factory may register, unregister and reset without deadlocking")
    func reentrantFactory() throws {
        let container = InjectionContainer()
        container.register((any API).self) {
            InjectionManager.register(Formatter.self) { Formatter() }
            InjectionManager.resetCurrentContainer()
            InjectionManager.unregister(Detail.self)
            return LiveAPI()
        }
        let api = try container.resolve((any API).self)
        #expect(container.isRegistered(Formatter.self))
        // The reset inside the factory abandoned the build, so it was not cached.
        #expect(try container.resolve((any API).self) !== api)
    }
}
