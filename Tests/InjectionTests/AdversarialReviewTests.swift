import Foundation
import Injection
import InjectionTesting
import Testing

// Adversarial review of today's features. Every test here fails against the current code.

private protocol AdvScreen: AnyObject, Sendable {}

@MainActor
private final class AdvMainActorScreen: AdvScreen {}

private protocol AdvStore: AnyObject, Sendable {}
private final class AdvAsyncStore: AdvStore {}

private protocol AdvAuth: AnyObject, Sendable {}
private final class AdvSession: AdvAuth {}

/// Holds the session through its protocol, as an app does with `.implements`.
private final class AdvAuthHolder: Sendable {
    let auth: any AdvAuth
    init(auth: any AdvAuth) { self.auth = auth }
}

/// Holds the session through its concrete type.
private final class AdvSessionHolder: Sendable {
    let session: AdvSession
    init(session: AdvSession) { self.session = session }
}

private final class AdvDisposableDB: InjectionDisposable, @unchecked Sendable {
    private let lock = NSLock()
    private var disposals = 0
    var disposeCount: Int { lock.withLock { disposals } }
    func dispose() { lock.withLock { disposals += 1 } }
}

private final class AdvPlain: Sendable {}

private struct AdvCardBuilder: Builder, Sendable {
    typealias BuildResult = AdvPlain
}

private final class AdvLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

@Suite("Adversarial review", .serialized)
struct AdversarialReviewTests {
    // MARK: implements

    @Test("resolveAsync of an alias of a main-actor registration hops like resolveAsync of the primary")
    func aliasOfMainActorPrimaryResolvesAsync() async throws {
        let container = InjectionContainer()
        container.register(AdvMainActorScreen.self, isolation: MainActor.shared) { AdvMainActorScreen() }
            .implements((any AdvScreen).self) { $0 }
        // Off the main actor, before anything is built: resolveAsync(AdvMainActorScreen.self) hops to the
        // main actor; the alias, which "resolves this registration and upcasts", must too.
        let viaAlias = await Task.detached { () -> Result<any AdvScreen, InjectionError> in
            do throws(InjectionError) { return .success(try await container.resolveAsync((any AdvScreen).self)) } catch {
                return .failure(error)
            }
        }.value
        switch viaAlias {
        case .success(let screen): #expect(screen === (try await container.resolveAsync(AdvMainActorScreen.self)))
        case .failure(let error): Issue.record("resolveAsync of the alias failed: \(error)")
        }
    }

    @Test("resolveAsync of an alias of an async registration runs the async factory like the primary does")
    func aliasOfAsyncPrimaryResolvesAsync() async throws {
        let container = InjectionContainer()
        container.register(AdvAsyncStore.self) { () async -> AdvAsyncStore in AdvAsyncStore() }
            .implements((any AdvStore).self) { $0 }
        do throws(InjectionError) {
            let store = try await container.resolveAsync((any AdvStore).self)
            #expect(store === (try await container.resolveAsync(AdvAsyncStore.self)))
        } catch {
            Issue.record("resolveAsync of the alias failed: \(error)")
        }
    }

    @Test("verify() passes for a sound graph whose main-actor registration has an alias")
    func verifyAcceptsAliasOfMainActorPrimary() throws {
        let container = InjectionContainer()
        container.register(AdvMainActorScreen.self, isolation: MainActor.shared) { AdvMainActorScreen() }
            .implements((any AdvScreen).self) { $0 }
        // verify() skips the main-actor factory; the alias is just another name for it.
        #expect(throws: Never.self) { try container.verify() }
    }

    @Test("verify() passes for a sound graph whose async registration has an alias")
    func verifyAcceptsAliasOfAsyncPrimary() throws {
        let container = InjectionContainer()
        container.register(AdvAsyncStore.self) { () async -> AdvAsyncStore in AdvAsyncStore() }
            .implements((any AdvStore).self) { $0 }
        #expect(throws: Never.self) { try container.verify() }
    }

    // MARK: diagnosticsHandler

    @Test("re-registering a type held through its alias by a cached instance is reported")
    func staleDependentThroughAliasIsReported() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            container.register(AdvSession.self) { AdvSession() }.implements((any AdvAuth).self) { $0 }
            container.register(AdvAuthHolder.self) { AdvAuthHolder(auth: Inject()) }
            let holder = try container.resolve(AdvAuthHolder.self)
            #expect(holder.auth === (try container.resolve(AdvSession.self)))
            container.register(AdvSession.self) { AdvSession() }   // the holder still holds the old session
            #expect(try container.resolve(AdvAuthHolder.self).auth !== (try container.resolve(AdvSession.self)), "stale indeed")
            #expect(lines.all.contains { $0.contains("AdvSession") && $0.contains("AdvAuthHolder") },
                    "the holder keeps the old session, through (any AdvAuth): \(lines.all)")
        }
    }

    @Test("re-registering a .weak type that a cached instance holds is reported")
    func staleWeakDependencyIsReported() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            container.register(AdvSession.self, lifetime: .weak) { AdvSession() }
            container.register(AdvSessionHolder.self) { AdvSessionHolder(session: Inject()) }
            let holder = try container.resolve(AdvSessionHolder.self)
            container.register(AdvSession.self, lifetime: .weak) { AdvSession() }
            #expect(try container.resolve(AdvSession.self) !== holder.session, "stale indeed")
            #expect(lines.all.contains { $0.contains("AdvSession") && $0.contains("AdvSessionHolder") },
                    "the holder keeps the old session alive: \(lines.all)")
        }
    }

    // MARK: register(_:instance:) and copies

    @Test("a copy (a test's container) that replaces an instance registration does not dispose the original's instance")
    func copyDoesNotDisposeTheOriginalsInstance() throws {
        let original = InjectionContainer()
        let db = AdvDisposableDB()
        original.register(AdvDisposableDB.self, instance: db)
        #expect(try original.resolve(AdvDisposableDB.self) === db)

        let testContainer = InjectionContainer(copying: original)   // what .isolatedInjection makes
        _ = try testContainer.resolve(AdvDisposableDB.self)
        testContainer.register(AdvDisposableDB.self) { AdvDisposableDB() }   // the test mocks it
        testContainer.removeAll()
        #expect(try original.resolve(AdvDisposableDB.self) === db, "the original still serves it")
        #expect(db.disposeCount == 0, "the original container's live instance was disposed by a copy")
    }

    @Test("a chained postConstruction of an instance registration runs once on the instance, not once per copy")
    func instancePostConstructionRunsOnce() throws {
        let original = InjectionContainer()
        let runs = AdvLines()
        original.register(AdvPlain.self, instance: AdvPlain()).postConstruction { _ in runs.append("run") }
        _ = try original.resolve(AdvPlain.self)
        for _ in 0..<3 { _ = try InjectionContainer(copying: original).resolve(AdvPlain.self) }
        #expect(runs.all.count == 1, "the one instance was post-constructed \(runs.all.count) times")
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

    // MARK: nil optionals

    @Test(".weak optional: nil is 'not available yet', not a weakNeedsClass error; a class instance is held weakly")
    func weakOptional() throws {
        let container = InjectionContainer()
        let available = AdvLines()
        container.register(AdvPlain?.self, lifetime: .weak) { available.all.isEmpty ? nil : AdvPlain() }
        do throws(InjectionError) {
            #expect(try container.resolve(AdvPlain?.self) == nil)
        } catch {
            Issue.record("a nil optional with .weak failed: \(error)")
        }
        available.append("now")
        do throws(InjectionError) {
            let first = try container.resolve(AdvPlain?.self)
            #expect(first != nil)
            #expect(try container.resolve(AdvPlain?.self) === first)
        } catch {
            Issue.record("a non-nil optional class instance with .weak failed: \(error)")
        }
    }

    // MARK: batch 2

    @Test("the graph shows an alias with its primary's lifetime, as implements documents")
    func aliasLifetimeInGraph() {
        let container = InjectionContainer()
        container.register(AdvSession.self, lifetime: .singleton) { AdvSession() }.implements((any AdvAuth).self) { $0 }
        let node = container.dependencyGraph().nodes.first { $0.name == "AdvAuth" }
        #expect(node?.lifetime == .singleton, "alias node: \(String(describing: node))")
    }

    @Test("InjectLazy of an optional does not keep a nil that the container refused to cache")
    func lazyNilOptional() throws {
        let container = InjectionContainer()
        let available = AdvLines()
        container.register(AdvPlain?.self) { available.all.isEmpty ? nil : AdvPlain() }
        let lazy = InjectionManager.withContainer(container) { InjectLazy(AdvPlain?.self) }
        #expect(try lazy.resolve() == nil)
        available.append("now")
        #expect(try container.resolve(AdvPlain?.self) != nil, "the container gives the instance now")
        #expect(try lazy.resolve() != nil, "the handle still holds the nil it saw first")
    }

}


// MARK: InjectionTesting

private final class AdvFromSuite: Sendable {}
private final class AdvFromTest: Sendable {}

@Sendable private func advRegisterSuiteServices() {
    InjectionManager.register(AdvFromSuite.self) { AdvFromSuite() }
}

@Sendable private func advRegisterTestServices() {
    InjectionManager.register(AdvFromTest.self) { AdvFromTest() }
}

@Suite("Adversarial review: traits and traps", .isolatedInjection(startingWith: advRegisterSuiteServices))
struct AdversarialTraitTests {
    @Test("a test's own .isolatedInjection(startingWith:) keeps its suite's starting registrations",
          .isolatedInjection(startingWith: advRegisterTestServices))
    func nestedStartingWith() {
        #expect(InjectionManager.isRegistered(AdvFromTest.self))
        #expect(InjectionManager.isRegistered(AdvFromSuite.self), "the suite's startingWith registrations were dropped")
    }

    @Test("a missing builder trapped in a test is told to register a builder closure, not a factory")
    func missingBuilderTrapAdvice() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = InjectionContainer(copying: InjectionManager.sharedContainer, testName: "\"the card test\"")
            InjectionManager.withContainer(container) {
                _ = AdvTrapBuilder().build()
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("no builder registered for AdvTrapBuilder"))
        #expect(output.contains("This happened in the test \"the card test\"."))
        // `register(AdvTrapBuilder.self) { ... }` with a closure that takes no model registers the model as a
        // plain type, which the build never finds: the test hint must use the builder form too.
        #expect(!output.contains("InjectionManager.register(AdvTrapBuilder.self) { ... }"), "\(output)")
    }
}

private struct AdvTrapBuilder: Builder, Sendable {
    typealias BuildResult = Int
}
