import Foundation
import Injection
import InjectionTesting
import Testing

// Async factories: `resolveAsync` and `prepare` build them, a synchronous `Inject()` of one not built yet
// says how to warm it, failures are not cached, and their errors carry the same chains as synchronous ones.

private final class Alpha: Sendable {}
private final class Beta: Sendable {}
private enum PrimaryStore: InjectionKey { typealias Value = any AsyncStore }

@Suite("Async factories", .isolatedInjection)
struct AsyncFactoryTests {
    @Test("Inject() of an unbuilt async type explains how to warm it; after prepare it returns the instance")
    func syncResolveOfAsyncFactory() async throws {
        let runs = Counter()
        InjectionManager.registerAsync((any AsyncStore).self) { await LiveAsyncStore.open(runs: runs) }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any AsyncStore).self) }
        #expect(error?.kind == .asyncFactory)
        #expect(error?.description.hasPrefix("Injection: AsyncStore has an async factory and is not built yet") == true)
        #expect(error?.description.contains("try await InjectionManager.prepare((any AsyncStore).self)") == true)
        #expect(error?.description.contains(
            "If the factory is async only to reach the main actor, register it with isolation: MainActor.shared") == true)
        try await InjectionManager.prepare((any AsyncStore).self)
        let store: any AsyncStore = Inject()
        #expect(store.serial == 1)
        #expect(runs.value == 1)
    }

    @Test("registerAsync registers an async factory for a type and a key, on the manager and on a container")
    func registerAsyncForms() async throws {
        let runs = Counter()
        InjectionManager.registerAsync(PrimaryStore.self) { await LiveAsyncStore.open(runs: runs) }
        #expect(try await InjectionManager.resolveAsync(PrimaryStore.self).serial == 1)
        let container = InjectionContainer()
        container.registerAsync(PrimaryStore.self, lifetime: .singleton) { await LiveAsyncStore.open(runs: runs) }
        container.registerAsync((any AsyncStore).self) { await LiveAsyncStore.open(runs: runs) }
        #expect(try await container.resolveAsync(PrimaryStore.self).serial == 2)
        #expect(try await container.resolveAsync((any AsyncStore).self).serial == 3)
        #expect(try container.resolve(PrimaryStore.self).serial == 2, "built already: a synchronous resolve returns it")
    }

    @Test("a synchronous resolve of a .transient or .weak async type says what works for that lifetime")
    func syncResolveOfUncachedAsyncFactory() async throws {
        InjectionManager.registerAsync((any AsyncStore).self, lifetime: .transient) { await LiveAsyncStore.open(runs: Counter()) }
        try await InjectionManager.prepare((any AsyncStore).self)  // Builds one, which a transient never keeps.
        let transient = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any AsyncStore).self) }
        #expect(transient?.kind == .asyncFactory)
        #expect(transient?.description.hasPrefix("Injection: AsyncStore has an async factory and is .transient, so") == true, "\(transient?.description ?? "")")
        #expect(transient?.description.contains("prepare((any AsyncStore).self)` at launch (then Inject()") == false, "advice that cannot work")
        #expect(transient?.description.contains("try await InjectionManager.resolveAsync((any AsyncStore).self)") == true)

        InjectionManager.registerAsync((any AsyncStore).self, lifetime: .weak) { await LiveAsyncStore.open(runs: Counter()) }
        let weak = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any AsyncStore).self) }
        #expect(weak?.description.contains("a .weak instance lives only while something holds it") == true, "\(weak?.description ?? "")")
    }

    @Test("async factories get the same missing-registration and cycle diagnostics")
    func asyncDiagnostics() async {
        InjectionManager.registerAsync(Alpha.self) { _ = try await InjectionManager.resolveAsync(Beta.self); return Alpha() }
        InjectionManager.registerAsync(Beta.self) { _ = try await InjectionManager.resolveAsync(Alpha.self); return Beta() }
        InjectionManager.registerAsync(Detail.self) { _ = try await InjectionManager.resolveAsync((any AsyncStore).self); return Detail(id: "") }
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
            return error?.kind == .notRegistered && error?.chain == ["Detail", "AsyncStore"]
        }
    }

    @Test("an async factory's failure is not cached, and the next resolve tries again")
    func asyncFailureRetries() async throws {
        struct Offline: Error {}
        let runs = Counter()
        InjectionManager.register((any AsyncStore).self) {
            if runs.increment() == 1 { throw Offline() }
            return LiveAsyncStore(serial: runs.value)
        }
        await #expect(throws: InjectionError.self) { try await InjectionManager.resolveAsync((any AsyncStore).self) }
        #expect(try await InjectionManager.resolveAsync((any AsyncStore).self).serial == 2)
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

// MARK: - A task started inside an async factory, after the construction ended

private final class Constructed: @unchecked Sendable {  // `isDone`: under `lock`.
    private let lock = NSLock()
    private var done = false
    func markDone() { lock.withLock { done = true } }
    var isDone: Bool { lock.withLock { done } }
}

private final class StartsTasks: Sendable {}

/// One more word than `Base`: tasks returning these differ in size, so one of them is likely to be
/// allocated where a freed task was.
private struct Grown<Base>: @unchecked Sendable {
    var word = 0
    var base: Base
}

/// A task's result of type `T`, all zero (every `T` here is made of `Int`s).
private struct ZeroResult<T>: @unchecked Sendable {
    let value: T
    init() {
        value = withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { buffer in
            UnsafeMutableRawPointer(buffer.baseAddress!).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.size)
            return buffer[0]
        }
    }
}

/// The construction task's identity.
private final class TaskIdentity: @unchecked Sendable {  // `identity`: under `lock`.
    private let lock = NSLock()
    private var identity = 0
    var value: Int {
        get { lock.withLock { identity } }
        set { lock.withLock { identity = newValue } }
    }
}

/// What each task saw: whether it had the construction task's identity, and whether what it resolved had
/// its `postConstruction` run.
private final class Sightings: @unchecked Sendable {  // `all`: under `lock`.
    private let lock = NSLock()
    private var items: [(sameIdentity: Bool, constructed: Bool)] = []
    func append(_ item: (Bool, Bool)) { lock.withLock { items.append(item) } }
    var all: [(sameIdentity: Bool, constructed: Bool)] { lock.withLock { items } }
}

extension AsyncFactoryTests {
    @Test("a task started inside an async factory runs postConstruction of what it resolves after the construction ended")
    func taskOutlivingConstructionRunsPostConstruction() async throws {
        // A task is told from the construction it was started in by the construction task's identity, the
        // hash of its address. Once that task is freed, a new one may get its address: it must not be
        // taken for the construction (whose resolution has ended, so what it deferred would never run).
        let container = InjectionContainer()
        container.register(Constructed.self, lifetime: .transient, factory: { Constructed() }, postConstruction: { $0.markDone() })
        var sizes: [Any.Type] = [Int.self]
        func grown<T>(_: T.Type) -> Any.Type { Grown<T>.self }
        while sizes.count < 80 { sizes.append(_openExistential(sizes.last!, do: grown)) }
        let sizedTypes = sizes
        let owner = TaskIdentity(), constructionEnded = AsyncGate(), finished = AsyncGate(), sightings = Sightings()
        container.registerAsync(StartsTasks.self, lifetime: .transient) { () async -> StartsTasks in
            owner.value = withUnsafeCurrentTask { $0!.hashValue }
            Task {
                await constructionEnded.wait()
                for _ in 0..<100 {
                    for type in sizedTypes {
                        func resolveInTask<T>(_: T.Type) async {
                            _ = await Task { () -> ZeroResult<T> in
                                let marked = try? InjectionManager.resolve(Constructed.self)
                                sightings.append((withUnsafeCurrentTask { $0!.hashValue } == owner.value, marked?.isDone ?? false))
                                return ZeroResult<T>()
                            }.value
                        }
                        await _openExistential(type, do: resolveInTask)
                    }
                }
                finished.open()
            }
            return StartsTasks()
        }
        _ = try await InjectionManager.withContainer(container) { try await container.resolveAsync(StartsTasks.self) }
        try await Task.sleep(for: .milliseconds(50))  // The construction task is released meanwhile.
        constructionEnded.open()
        await finished.wait()
        let all = sightings.all
        #expect(all.count == 8_000)
        let notConstructed = all.filter { !$0.constructed }.count
        #expect(notConstructed == 0, """
            postConstruction did not run in \(notConstructed) of \(all.count) resolves \
            (\(all.filter { $0.sameIdentity }.count) tasks had the construction task's identity)
            """)
    }
}
