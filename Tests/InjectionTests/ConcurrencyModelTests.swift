import Foundation
import Injection
import InjectionTesting
import Testing

// MARK: - Fixtures

@MainActor
private final class ProfileViewModel {
    var title = "profile"
    init() {}
}

@MainActor
private final class ProfileScreen {
    let viewModel: ProfileViewModel = Inject()
}

private protocol Store: AnyObject, Sendable { var serial: Int { get } }
private final class LiveStore: Store {
    let serial: Int
    init(serial: Int) { self.serial = serial }
    /// Opens a store: suspends, like a database open would.
    static func open(runs: Counter, delay: Duration = .milliseconds(20)) async -> LiveStore {
        let serial = runs.increment()
        try? await Task.sleep(for: delay)
        return LiveStore(serial: serial)
    }
}

private final class Alpha: Sendable {}
private final class Beta: Sendable {}

@Suite("Main-actor and async factories", .isolatedInjection)
struct ConcurrencyModelTests {
    // MARK: Main actor

    @MainActor
    @Test("a main-actor type registers in one line and injects into main-actor code")
    func mainActorType() {
        InjectionManager.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
        let screen = ProfileScreen()
        #expect(screen.viewModel.title == "profile")
        #expect(Inject(ProfileViewModel.self) === screen.viewModel)
    }

    @Test("resolving a main-actor type off the main actor fails with a clear error, not a crash")
    func mainActorTypeOffMainThread() {
        let container = InjectionContainer()
        container.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
        let errors = Collector<InjectionError>()
        let done = Gate()
        onThread {
            do throws(InjectionError) { _ = try container.resolve(ProfileViewModel.self) } catch { errors.append(error) }
            done.open()
        }
        #expect(done.wait())
        let error = errors.values.first
        #expect(error?.kind == .wrongIsolation)
        #expect(error?.description.hasPrefix("Injection: ProfileViewModel is registered with isolation: MainActor, but it was resolved synchronously off the main actor") == true)
        #expect(error?.description.contains("resolveAsync(ProfileViewModel.self)") == true)
    }

    @Test("Inject() of a main-actor type off the main actor traps with that message")
    func mainActorTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            InjectionManager.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
            await Task.detached { _ = Inject(ProfileViewModel.self) }.value
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: ProfileViewModel is registered with isolation: MainActor"))
    }

    @Test("resolveAsync hops to the main actor for a main-actor type, and the instance is shared")
    func mainActorTypeAsync() async throws {
        InjectionManager.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
        let fromBackground = try await Task.detached { [container = InjectionManager.currentContainer] in
            try await container.resolveAsync(ProfileViewModel.self)
        }.value
        let fromMain = await MainActor.run { Inject(ProfileViewModel.self) }
        #expect(fromBackground === fromMain)
    }

    // MARK: Async factories

    @Test("an async factory is built exactly once under 100 concurrent tasks")
    func asyncExactlyOnce() async throws {
        let runs = Counter()
        InjectionManager.register((any Store).self) { await LiveStore.open(runs: runs) }
        let serials = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<100 {
                group.addTask { ObjectIdentifier(try await InjectionManager.resolveAsync((any Store).self)) }
            }
            return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
        }
        #expect(runs.value == 1)
        #expect(serials.count == 1)
    }

    @Test("cancelling one waiting task does not cancel the construction the others wait for")
    func cancellationDoesNotCancelConstruction() async throws {
        let runs = Counter()
        let gate = AsyncGate()
        InjectionManager.register((any Store).self) {
            await gate.wait()
            #expect(!Task.isCancelled)  // The construction's own task is never cancelled.
            return LiveStore(serial: runs.increment())
        }
        let container = InjectionManager.currentContainer
        let first = Task { try await container.resolveAsync((any Store).self) }
        #expect(await gate.started())
        let second = Task { try await container.resolveAsync((any Store).self) }
        first.cancel()
        gate.open()
        let secondStore = try await second.value
        let firstStore = try await first.value  // The cancelled waiter still gets the instance.
        #expect(firstStore === secondStore)
        #expect(runs.value == 1)
    }

    @Test("an async construction in flight across a reset never lands in the new scope")
    func resetDuringAsyncConstruction() async throws {
        let runs = Counter()
        let gate = AsyncGate()
        InjectionManager.register((any Store).self) {
            let serial = runs.increment()
            if serial == 1 { await gate.wait() }
            return LiveStore(serial: serial)
        }
        let container = InjectionManager.currentContainer
        let inFlight = Task { try await container.resolveAsync((any Store).self) }
        #expect(await gate.started())
        container.resetCurrentContainer()
        gate.open()
        #expect(try await inFlight.value.serial == 1)  // Its caller gets it...
        let next = try await InjectionManager.resolveAsync((any Store).self)
        #expect(next.serial == 2)                      // ...but the new scope builds its own.
        #expect(try await InjectionManager.resolveAsync((any Store).self) === next)
    }

    @Test("Inject() of an unbuilt async type explains how to warm it; after prepare it returns the instance")
    func syncResolveOfAsyncFactory() async throws {
        let runs = Counter()
        InjectionManager.register((any Store).self) { await LiveStore.open(runs: runs) }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any Store).self) }
        #expect(error?.kind == .asyncFactory)
        #expect(error?.description.hasPrefix("Injection: Store has an async factory and is not built yet") == true)
        #expect(error?.description.contains("try await InjectionManager.prepare((any Store).self)") == true)
        try await InjectionManager.prepare((any Store).self)
        let store: any Store = Inject()
        #expect(store.serial == 1)
        #expect(runs.value == 1)
    }

    @Test("async factories get the same missing-registration and cycle diagnostics")
    func asyncDiagnostics() async {
        InjectionManager.register(Alpha.self) { _ = try await InjectionManager.resolveAsync(Beta.self); return Alpha() }
        InjectionManager.register(Beta.self) { _ = try await InjectionManager.resolveAsync(Alpha.self); return Beta() }
        InjectionManager.register(Detail.self) { _ = try await InjectionManager.resolveAsync((any Store).self); return Detail(id: "") }
        await #expect {
            try await InjectionManager.resolveAsync(Alpha.self)
        } throws: { error in
            let error = error as? InjectionError
            return error?.kind == .cycle && error?.chain == ["Alpha", "Beta", "Alpha"]
        }
        await #expect {
            try await InjectionManager.resolveAsync(Detail.self)
        } throws: { error in
            let error = error as? InjectionError
            return error?.kind == .notRegistered && error?.chain == ["Detail", "Store"]
        }
    }

    @Test("an async factory's failure is not cached, and the next resolve tries again")
    func asyncFailureRetries() async throws {
        struct Offline: Error {}
        let runs = Counter()
        InjectionManager.register((any Store).self) {
            if runs.increment() == 1 { throw Offline() }
            return LiveStore(serial: runs.value)
        }
        await #expect(throws: InjectionError.self) { try await InjectionManager.resolveAsync((any Store).self) }
        #expect(try await InjectionManager.resolveAsync((any Store).self).serial == 2)
    }

    @Test("resolveAsync works for synchronous registrations too, with every lifetime")
    func resolveAsyncForSyncFactories() async throws {
        InjectionManager.register((any API).self) { LiveAPI() }
        InjectionManager.register(Formatter.self, lifetime: .transient) { Formatter() }
        let api = try await InjectionManager.resolveAsync((any API).self)
        #expect(api === Inject((any API).self))
        #expect(try await InjectionManager.resolveAsync(Formatter.self) !== (try await InjectionManager.resolveAsync(Formatter.self)))
    }
}
