import Foundation
@_spi(Testing) import InjectionTesting
import InjectionTesting
import Testing

// A logout frees every session object, whichever threads resolved them, and the container
// does not grow, login after login; `liveInstancesFromPreviousScopes()` lists what is still held.

// MARK: - Fixtures

/// A session object that counts itself while alive.
private final class LoggedIn: Sendable {
    let user: Int
    private let live: Counter, freed: Counter
    init(user: Int, live: Counter, freed: Counter) {
        self.user = user
        self.live = live
        self.freed = freed
        live.increment()
    }
    deinit { freed.increment() }
}

private enum LeakSession: InjectionKey { typealias Value = LoggedIn }
private enum LeakCart: InjectionKey { typealias Value = LoggedIn }
private enum LeakDraft: InjectionKey { typealias Value = LoggedIn }
private enum LeakPresence: InjectionKey { typealias Value = LoggedIn }
private enum LeakClock: InjectionKey { typealias Value = LoggedIn }

/// Weak references to what one session resolved, filled from any thread.
private final class WeakRefs: @unchecked Sendable {
    private let lock = NSLock()
    private var references: [() -> AnyObject?] = []
    func add(_ object: AnyObject) {
        lock.withLock { references.append { [weak object] in object } }
    }
    var alive: Int { lock.withLock { references.filter { $0() != nil }.count } }
    var count: Int { lock.withLock { references.count } }
    func removeAll() { lock.withLock { references = [] } }
}

/// Registers the session types of `user` on `container` (inside a login's `resetCurrentContainer { }`).
private func registerSession(_ user: Int, in container: InjectionContainer, live: Counter, freed: Counter) {
    container.register(LeakSession.self) { LoggedIn(user: user, live: live, freed: freed) }
    container.register(LeakCart.self) {
        _ = try InjectionManager.resolve(LeakSession.self)
        _ = try InjectionManager.resolve(LeakClock.self)
        return LoggedIn(user: user, live: live, freed: freed)
    }
    container.register(LeakDraft.self, lifetime: .transient) {
        _ = try InjectionManager.resolve(LeakCart.self)
        return LoggedIn(user: user, live: live, freed: freed)
    }
    container.register(LeakPresence.self, lifetime: .weak) {
        _ = try InjectionManager.resolve(LeakSession.self)
        return LoggedIn(user: user, live: live, freed: freed)
    }
}

/// Resolves every session type once, checks they belong to `user`, and keeps only weak references.
private func useSession(_ user: Int, from container: InjectionContainer, into refs: WeakRefs) -> Bool {
    guard let session = try? container.resolve(LeakSession.self), let cart = try? container.resolve(LeakCart.self),
          let draft = try? container.resolve(LeakDraft.self), let presence = try? container.resolve(LeakPresence.self)
    else { return false }
    for object in [session, cart, draft, presence] { refs.add(object) }
    return [session, cart, draft, presence].allSatisfy { $0.user == user }
        && (try? container.resolve(LeakSession.self)) === session
}

private final class AdvPlain: Sendable {}

private struct AdvCardBuilder: Builder, Sendable {
    typealias BuildResult = AdvPlain
}

private final class Captured: Sendable {}
private final class Scoped: Sendable {
    let captured: Captured
    init(captured: Captured) { self.captured = captured }
}

/// Counts the deinits of its instances, per test (each test makes its own `Deaths`).
private final class Deaths: @unchecked Sendable {  // Its state: under `lock`.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    func died(_ name: String) { lock.withLock { counts[name, default: 0] += 1 } }
    func count(_ name: String) -> Int { lock.withLock { counts[name, default: 0] } }
    var total: Int { lock.withLock { counts.values.reduce(0, +) } }
}

/// An object whose deinit is counted under `name`.
private final class Tracked: @unchecked Sendable {
    let name: String
    let deaths: Deaths
    init(_ name: String, _ deaths: Deaths) {
        self.name = name
        self.deaths = deaths
    }
    deinit { deaths.died(name) }
}

private final class MainModel: Sendable {}
private final class AsyncModel: Sendable {}
private final class CaptureOnly: Sendable {}
private protocol MainService: Sendable {}
extension MainModel: MainService {}
private protocol AsyncService: Sendable {}
extension AsyncModel: AsyncService {}

private final class ListedBefore: Sendable {}
private final class ReplacedLeaf: Sendable {
    let serial: Int
    init(serial: Int) { self.serial = serial }
}
private final class CapturedByFactory: Sendable {}

@Suite("Leaks")
struct LeakTests {
    static let cycles = 10_000

    @Test("10,000 login/logout cycles free every evicted instance and the container does not grow")
    func loginLogoutCyclesFreeEverything() {
        let container = InjectionContainer()
        container.tracksEvictedInstances = true
        let live = Counter(), freed = Counter(), clockLive = Counter(), clockFreed = Counter()
        container.register(LeakClock.self, lifetime: .singleton) { LoggedIn(user: -1, live: clockLive, freed: clockFreed) }
        let refs = WeakRefs()
        var problems: [String] = []
        var size: (nodes: Int, edges: Int)?
        for user in 0..<Self.cycles where problems.isEmpty {
            container.reset { registerSession(user, in: container, live: live, freed: freed) }  // login
            if !useSession(user, from: container, into: refs) { problems.append("cycle \(user): wrong session") }
            container.reset()  // logout
            if refs.alive != 0 { problems.append("cycle \(user): \(refs.alive) of \(refs.count) instances outlived the logout") }
            if live.value != freed.value { problems.append("cycle \(user): \(live.value - freed.value) instances alive after logout") }
            let stale = container.liveInstancesFromPreviousScopes()
            if !stale.isEmpty { problems.append("cycle \(user): liveInstancesFromPreviousScopes() = \(stale)") }
            if user % 100 == 0 {
                let graph = container.dependencyGraph()
                if let size, size != (graph.nodes.count, graph.edges.count) {
                    problems.append("cycle \(user): the graph grew from \(size) to \((graph.nodes.count, graph.edges.count))")
                }
                size = size ?? (graph.nodes.count, graph.edges.count)
            }
            refs.removeAll()
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(live.value == Self.cycles * 4)  // Per cycle: Session, LeakCart, LeakDraft, LeakPresence, each built once.
        #expect(size?.nodes == 5)
        #expect(clockLive.value == 1 && clockFreed.value == 0)  // The singleton was built once and kept.
    }

    @Test("10,000 login/logout cycles through InjectionManager leave no instance behind", .isolatedInjection)
    func loginLogoutThroughInjectionManager() {
        InjectionManager.currentContainer.tracksEvictedInstances = true  // On by default in debug builds only.
        let live = Counter(), freed = Counter()
        InjectionManager.register(LeakClock.self, lifetime: .singleton) { LoggedIn(user: -1, live: Counter(), freed: Counter()) }
        let refs = WeakRefs()
        var failures = 0
        for user in 0..<Self.cycles {
            InjectionManager.resetCurrentContainer {
                registerSession(user, in: InjectionManager.currentContainer, live: live, freed: freed)
            }
            if !useSession(user, from: InjectionManager.currentContainer, into: refs) { failures += 1 }
            InjectionManager.resetCurrentContainer()
            if refs.alive != 0 || live.value != freed.value { failures += 1 }
            refs.removeAll()
        }
        #expect(failures == 0)
        #expect(InjectionManager.liveInstancesFromPreviousScopes().isEmpty)
        #expect(InjectionManager.dependencyGraph().nodes.count == 5)
        // The leak check does see an instance held across a logout, so its silence above means something.
        InjectionManager.resetCurrentContainer { registerSession(-2, in: InjectionManager.currentContainer, live: live, freed: freed) }
        var held: LoggedIn? = Inject(LeakSession.self)
        InjectionManager.resetCurrentContainer()
        #expect(InjectionManager.liveInstancesFromPreviousScopes() == ["LeakSession"])
        #expect(held?.user == -2)
        held = nil
        #expect(InjectionManager.liveInstancesFromPreviousScopes().isEmpty)
    }

    @Test("a released container frees its instances and transients' registrations, also those another thread resolved")
    func releasedContainerLeavesNothingInThreadCaches() throws {
        final class Held: Sendable {}
        final class Made: Sendable {}
        weak var instance: Held?
        weak var transientRegistration: AnyObject?
        let resolved = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), exited = DispatchSemaphore(value: 0)
        do {
            let container = InjectionContainer()
            container.register(Held.self, lifetime: .singleton) { Held() }
            container.register(Made.self, lifetime: .transient) { Made() }
            for _ in 0..<2 { _ = try container.resolve(Made.self) }
            instance = try container.resolve(Held.self)
            #expect(try container.resolve(Held.self) === instance)
            transientRegistration = InjectionProbe.registration(for: Made.self, in: container)
            // A thread that resolves them too and outlives the container.
            onThread { [weak container] in
                if let container {  // Held only while resolving.
                    for _ in 0..<2 { _ = try? container.resolve(Held.self) }
                    for _ in 0..<2 { _ = try? container.resolve(Made.self) }
                }
                resolved.signal()
                release.wait()
                exited.signal()
            }
            resolved.wait()
        }
        #expect(instance == nil, "something kept the released container's instance")
        #expect(transientRegistration == nil, "something kept the released container's registration")
        release.signal()
        exited.wait()
    }

    @Test("instances other threads resolved are freed by the logout too")
    func threadCachesDoNotKeepEvictedInstances() {
        let container = InjectionContainer()
        let live = Counter(), freed = Counter()
        container.register(LeakClock.self, lifetime: .singleton) { LoggedIn(user: -1, live: Counter(), freed: Counter()) }
        let workers = 2, cycles = Self.cycles / 2
        let go = (0..<workers).map { _ in DispatchSemaphore(value: 0) }
        let done = DispatchSemaphore(value: 0)
        let refs = WeakRefs(), wrong = Counter(), currentUser = Counter(), stop = Latch()
        for index in 0..<workers {
            onThread {
                while true {
                    go[index].wait()
                    if stop.wait(seconds: 0) { return }
                    if !useSession(currentUser.value, from: container, into: refs) { wrong.increment() }
                    done.signal()
                }
            }
        }
        var problems: [String] = []
        for user in 1...cycles where problems.isEmpty {
            container.reset { registerSession(user, in: container, live: live, freed: freed) }
            currentUser.increment()
            for semaphore in go { semaphore.signal() }
            for _ in 0..<workers where done.wait(timeout: .now() + waitLimit) == .timedOut { problems.append("a worker hung") }
            container.reset()
            if refs.alive != 0 { problems.append("cycle \(user): \(refs.alive) instances outlived the logout") }
            if live.value != freed.value { problems.append("cycle \(user): \(live.value - freed.value) instances alive") }
            refs.removeAll()
        }
        stop.open()
        for semaphore in go { semaphore.signal() }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(wrong.value == 0)
        // Per cycle: one Session and one LeakCart shared by the workers, a LeakDraft each, and one LeakPresence or more.
        #expect(live.value >= cycles * (3 + workers))
    }

    // MARK: liveInstancesFromPreviousScopes()

    @Test("liveInstancesFromPreviousScopes lists evicted instances that are still held", .isolatedInjection)
    func staleInstances() {
        InjectionManager.currentContainer.tracksEvictedInstances = true  // On by default in debug builds only.
        InjectionManager.register(Session.self) { Session(user: "a") }
        InjectionManager.register((any API).self) { LiveAPI() }
        var leaked: Session? = Inject(Session.self)
        _ = Inject((any API).self)
        InjectionManager.resetCurrentContainer()
        #expect(InjectionManager.liveInstancesFromPreviousScopes() == ["Session"])
        #expect(leaked?.user == "a")  // Held until here.
        leaked = nil
        #expect(InjectionManager.liveInstancesFromPreviousScopes().isEmpty)
    }

    @Test("tracking can be turned off", .isolatedInjection)
    func trackingCanBeTurnedOff() {
        let container = InjectionManager.currentContainer
        container.tracksEvictedInstances = false
        InjectionManager.register(Session.self) { Session(user: "a") }
        let held: Session = Inject()
        InjectionManager.resetCurrentContainer()
        #expect(InjectionManager.liveInstancesFromPreviousScopes().isEmpty)
        withExtendedLifetime(held) {}
    }

    @Test("liveInstancesFromPreviousScopes does not report a builder's closure replaced in a copy")
    func replacedBuilderInACopyIsNotALeak() throws {
        let original = InjectionContainer()
        original.register(AdvCardBuilder.self) { _ in AdvPlain() }
        let testContainer = InjectionContainer(copying: original)
        testContainer.tracksEvictedInstances = true
        _ = try testContainer.build(AdvCardBuilder())
        testContainer.register(AdvCardBuilder.self) { _ in AdvPlain() }   // a fake builder
        #expect(testContainer.liveInstancesFromPreviousScopes().isEmpty,
                "no instance of the test leaked: \(testContainer.liveInstancesFromPreviousScopes())")
    }

    // MARK: The container does not grow

    @Test("unregistering a scoped type that was resolved releases its registration (and what its factory captured) without a reset")
    func unregisterReleasesRegistration() throws {
        let container = InjectionContainer()
        weak var weakCaptured: Captured?
        do {
            let captured = Captured()
            weakCaptured = captured
            container.register(Scoped.self) { [captured] in Scoped(captured: captured) }
        }
        _ = try container.resolve(Scoped.self)  // Holds an instance now, for the next reset to evict.
        container.unregister(Scoped.self)
        #expect(!container.isRegistered(Scoped.self))
        #expect(weakCaptured == nil, "the removed registration is still retained until the next reset")
        container.reset()
        #expect(weakCaptured == nil)
    }

    @Test("re-registering a resolved scoped type again and again does not grow the container without a reset")
    func reRegistrationDoesNotAccumulate() throws {
        let container = InjectionContainer()
        for index in 0..<1_000 {
            container.register(Scoped.self) { Scoped(captured: Captured()) }
            _ = try container.resolve(Scoped.self)
            _ = index
        }
        let listed = InjectionProbe.resettableCount(in: container)
        #expect(listed <= 1, "a reset would visit \(listed) keys for one registration")
    }

    /// A replaced or unregistered registration that cached instances is let go at once, with what its
    /// factory captured: nothing keeps a removed registration until the next reset.
    @Test("a replaced registration that stored instances is let go at once, with what its factory captured")
    func replacedRegistrationIsLetGo() throws {
        let container = InjectionContainer()
        container.register(ListedBefore.self) { ListedBefore() }
        _ = try container.resolve(ListedBefore.self)
        weak var captured: CapturedByFactory?
        for round in 0..<3 {
            do {
                let object = CapturedByFactory()
                captured = object
                container.register(ReplacedLeaf.self) { [object] in _ = object; return ReplacedLeaf(serial: round) }
            }
            _ = try container.resolve(ReplacedLeaf.self)
            #expect(captured != nil)
            if round == 2 {
                container.unregister(ReplacedLeaf.self)
            } else {
                container.register(ReplacedLeaf.self) { ReplacedLeaf(serial: -1) }
            }
            #expect(captured == nil, "round \(round): the replaced registration is still held")
            _ = try? container.resolve(ReplacedLeaf.self)
        }
    }

    // MARK: What factories capture

    @MainActor
    @Test("main-actor and async factories, a plain factory that captures, copies, implements aliases and postConstruction steps release what the factories captured exactly once")
    func everyKindReleasesItsCaptureOnce() async throws {
        let deaths = Deaths()
        weak var mainCapture: Tracked?
        weak var asyncCapture: Tracked?
        weak var plainCapture: Tracked?
        weak var onlyCapture: Tracked?
        do {
            let container = InjectionContainer()
            let main = Tracked("main factory", deaths), async = Tracked("async factory", deaths)
            let plain = Tracked("plain factory", deaths)
            mainCapture = main
            asyncCapture = async
            plainCapture = plain
            // Captured by a factory of its own.
            let only = Tracked("capturing factory", deaths)
            onlyCapture = only
            container.register(CaptureOnly.self) { _ = only; return CaptureOnly() }
            container.register(MainModel.self, isolation: MainActor.shared) { _ = main; return MainModel() }
                .implements((any MainService).self) { $0 }
                .postConstruction { _ in _ = main }
            container.registerAsync(AsyncModel.self) { () async -> AsyncModel in _ = async; return AsyncModel() }
                .implements((any AsyncService).self) { $0 }
            container.register(Formatter.self) { _ = plain; return Formatter() }
                .postConstruction { _ in _ = plain }
            let copies = (0..<3).map { _ in InjectionContainer(copying: container) }
            for resolving in [container] + copies {
                let model = try resolving.resolve(MainModel.self)
                #expect(try resolving.resolve((any MainService).self) as AnyObject === model)
                let asyncModel = try await resolving.resolveAsync(AsyncModel.self)
                #expect(try await resolving.resolveAsync((any AsyncService).self) as AnyObject === asyncModel)
                _ = try resolving.resolve(Formatter.self)
                _ = try resolving.resolve(CaptureOnly.self)
            }
            // Re-registering releases the old registrations' holders (the new ones hold the same captures).
            container.register(MainModel.self, isolation: MainActor.shared) { _ = main; return MainModel() }
            container.registerAsync(AsyncModel.self) { () async -> AsyncModel in _ = async; return AsyncModel() }
            container.register(CaptureOnly.self) { _ = only; return CaptureOnly() }
            #expect(try container.resolve(CaptureOnly.self) !== copies[2].resolve(CaptureOnly.self))
            #expect(try container.resolve(MainModel.self) !== copies[0].resolve(MainModel.self))
            _ = try await copies[1].resolveAsync(AsyncModel.self)
            #expect(deaths.total == 0, "a copy still holds every factory")
        }
        #expect(mainCapture == nil)
        #expect(asyncCapture == nil)
        #expect(plainCapture == nil)
        #expect(onlyCapture == nil)
        #expect(deaths.count("capturing factory") == 1)
        #expect(deaths.count("main factory") == 1)
        #expect(deaths.count("async factory") == 1)
        #expect(deaths.count("plain factory") == 1)
    }
}
