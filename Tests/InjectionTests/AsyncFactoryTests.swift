import Foundation
import Injection
import InjectionTesting
import Testing

// Async factories: `resolveAsync` and `prepare` build them, a synchronous `Inject()` of one not built yet
// says how to warm it, failures are not cached, and their errors carry the same chains as synchronous ones.

private final class Alpha: Sendable {}
private final class Beta: Sendable {}

@Suite("Async factories", .isolatedInjection)
struct AsyncFactoryTests {
    @Test("Inject() of an unbuilt async type explains how to warm it; after prepare it returns the instance")
    func syncResolveOfAsyncFactory() async throws {
        let runs = Counter()
        InjectionManager.register((any AsyncStore).self) { await LiveAsyncStore.open(runs: runs) }
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any AsyncStore).self) }
        #expect(error?.kind == .asyncFactory)
        #expect(error?.description.hasPrefix("Injection: AsyncStore has an async factory and is not built yet") == true)
        #expect(error?.description.contains("try await InjectionManager.prepare((any AsyncStore).self)") == true)
        try await InjectionManager.prepare((any AsyncStore).self)
        let store: any AsyncStore = Inject()
        #expect(store.serial == 1)
        #expect(runs.value == 1)
    }

    @Test("a synchronous resolve of a .transient or .weak async type says what works for that lifetime")
    func syncResolveOfUncachedAsyncFactory() async throws {
        InjectionManager.register((any AsyncStore).self, lifetime: .transient) { await LiveAsyncStore.open(runs: Counter()) }
        try await InjectionManager.prepare((any AsyncStore).self)  // Builds one, which a transient never keeps.
        let transient = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any AsyncStore).self) }
        #expect(transient?.kind == .asyncFactory)
        #expect(transient?.description.hasPrefix("Injection: AsyncStore has an async factory and is .transient, so") == true, "\(transient?.description ?? "")")
        #expect(transient?.description.contains("prepare((any AsyncStore).self)` at launch (then Inject()") == false, "advice that cannot work")
        #expect(transient?.description.contains("try await InjectionManager.resolveAsync((any AsyncStore).self)") == true)

        InjectionManager.register((any AsyncStore).self, lifetime: .weak) { await LiveAsyncStore.open(runs: Counter()) }
        let weak = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any AsyncStore).self) }
        #expect(weak?.description.contains("a .weak instance lives only while something holds it") == true, "\(weak?.description ?? "")")
    }

    @Test("async factories get the same missing-registration and cycle diagnostics")
    func asyncDiagnostics() async {
        InjectionManager.register(Alpha.self) { _ = try await InjectionManager.resolveAsync(Beta.self); return Alpha() }
        InjectionManager.register(Beta.self) { _ = try await InjectionManager.resolveAsync(Alpha.self); return Beta() }
        InjectionManager.register(Detail.self) { _ = try await InjectionManager.resolveAsync((any AsyncStore).self); return Detail(id: "") }
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
