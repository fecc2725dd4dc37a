import Foundation
import Injection
import Testing

// What people moving from other libraries expect of registration: implements (an alias resolves, verifies
// and shows in the graph like its primary), instance, a per-container default lifetime, removeAll, chained
// postConstruction, and nil optionals that are not cached.

private protocol Auth: AnyObject, Sendable { var token: String { get } }
private protocol TokenStore: AnyObject, Sendable { func store(_ token: String) }

private final class LiveSession: Auth, TokenStore, InjectionDisposable, @unchecked Sendable {
    let disposals: Counter
    init(disposals: Counter) { self.disposals = disposals }
    var token: String { "t" }
    func store(_ token: String) {}
    func dispose() { disposals.increment() }
}

private final class Plain: Sendable {}

/// Not `Sendable`: made at launch and handed to the container.
private final class LaunchConfig {
    var name = "launch"
}

private final class Steps: @unchecked Sendable {
    private let lock = NSLock()
    private var steps: [String] = []
    func append(_ step: String) { lock.withLock { steps.append(step) } }
    var all: [String] { lock.withLock { steps } }
}

private protocol AdvScreen: AnyObject, Sendable {}
@MainActor
private final class AdvMainActorScreen: AdvScreen {}
private protocol AdvStore: AnyObject, Sendable {}
private final class AdvAsyncStore: AdvStore {}
private protocol AdvAuth: AnyObject, Sendable {}
private final class AdvSession: AdvAuth {}
private struct AdvFailure: Error {}
private final class AdvPlain: Sendable {}
private final class AdvLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// Counts its instances.
private final class CountedBuild: Sendable {
    init(_ builds: Counter) { builds.increment() }
}

private protocol AdvFScreen: AnyObject, Sendable {}
@MainActor private final class AdvFMainScreen: AdvFScreen {}
private final class AdvFPlainScreen: AdvFScreen {}
private protocol AdvFStore: AnyObject, Sendable {}
private final class AdvFStoreImpl: AdvFStore {}

private func resolveAsyncOffMainActor<T>(_ container: InjectionContainer, _ type: T.Type) async -> Result<T, InjectionError> {
    let unchecked = await Task.detached { () -> UncheckedResult in
        do throws(InjectionError) { return UncheckedResult(.success(try await container.resolveAsync(type))) } catch {
            return UncheckedResult(.failure(error))
        }
    }.value
    return unchecked.result.map { $0 as! T }
}

private struct UncheckedResult: @unchecked Sendable {
    let result: Result<Any, InjectionError>
    init(_ result: Result<Any, InjectionError>) { self.result = result }
}

@Suite("Registration features")
struct RegistrationFeatureTests {
    @Test("implements: one instance under several protocols, in one scope, evicted once by a reset")
    func implementsSharesOneInstance() throws {
        let container = InjectionContainer()
        let disposals = Counter()
        container.register(LiveSession.self) { LiveSession(disposals: disposals) }
            .implements((any Auth).self) { $0 }
            .implements((any TokenStore).self) { $0 }
        let session = try container.resolve(LiveSession.self)
        #expect(try container.resolve((any Auth).self) === session)
        #expect(try container.resolve((any TokenStore).self) === session)
        let viaInject = InjectionManager.withContainer(container) { Inject((any Auth).self) }
        #expect(viaInject === session)
        container.reset()
        #expect(disposals.value == 1, "a reset evicts the one instance once")
        let next = try container.resolve((any Auth).self)
        #expect(next !== session)
        #expect(try container.resolve(LiveSession.self) === next, "the new scope shares one instance again")
    }

    @Test("implements follows the registration's lifetime: a transient gives a new instance each time")
    func implementsFollowsLifetime() throws {
        let container = InjectionContainer()
        container.register(LiveSession.self, lifetime: .transient) { LiveSession(disposals: Counter()) }
            .implements((any Auth).self) { $0 }
        #expect(try container.resolve((any Auth).self) !== (try container.resolve((any Auth).self)))
    }

    @Test("implements in a copied container resolves the copy's instance, not the original's")
    func implementsInACopy() throws {
        let original = InjectionContainer()
        original.register(LiveSession.self) { LiveSession(disposals: Counter()) }.implements((any Auth).self) { $0 }
        let copy = InjectionContainer(copying: original)
        #expect(try copy.resolve((any Auth).self) === (try copy.resolve(LiveSession.self)))
        #expect(try copy.resolve((any Auth).self) !== (try original.resolve((any Auth).self)))
    }

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

    @Test("an alias of a main-actor registration resolves synchronously off the main actor once its primary is built, as the primary does")
    func aliasOfBuiltMainActorPrimaryResolvesOffMainActor() async throws {
        let container = InjectionContainer()
        container.register(AdvMainActorScreen.self, isolation: MainActor.shared) { AdvMainActorScreen() }
            .implements((any AdvScreen).self) { $0 }
        let built = try await container.resolveAsync(AdvMainActorScreen.self)
        let offMain = await Task.detached { () -> (primary: Result<AdvMainActorScreen, InjectionError>, alias: Result<any AdvScreen, InjectionError>) in
            let primary = Result { () throws(InjectionError) in try container.resolve(AdvMainActorScreen.self) }
            let alias = Result { () throws(InjectionError) in try container.resolve((any AdvScreen).self) }
            return (primary, alias)
        }.value
        #expect(try offMain.primary.get() === built)  // What the primary does once built...
        #expect(try offMain.alias.get() === built)  // ...its alias does.
    }

    @Test("an alias of a main-actor registration not built yet fails off the main actor with the primary's wrongIsolation")
    func aliasOfUnbuiltMainActorPrimaryFailsOffMainActor() async {
        let container = InjectionContainer()
        container.register(AdvMainActorScreen.self, isolation: MainActor.shared) { AdvMainActorScreen() }
            .implements((any AdvScreen).self) { $0 }
        let result = await Task.detached { () -> Result<any AdvScreen, InjectionError> in
            Result { () throws(InjectionError) in try container.resolve((any AdvScreen).self) }
        }.value
        guard case .failure(let error) = result else {
            Issue.record("resolved off the main actor: \(result)")
            return
        }
        #expect(error.kind == .wrongIsolation)
        #expect(error.description.contains("AdvMainActorScreen"))
        // Nothing was built off the main actor: the primary is built on it, once, later.
        let screen = try? await container.resolveAsync((any AdvScreen).self)
        let primary = try? await container.resolveAsync(AdvMainActorScreen.self)
        #expect(screen != nil && screen === primary)
    }

    @Test("an alias of an async registration resolves synchronously once its primary is built, as the primary does")
    func aliasOfBuiltAsyncPrimaryResolvesSynchronously() async throws {
        let container = InjectionContainer()
        container.registerAsync(AdvAsyncStore.self) { () async -> AdvAsyncStore in AdvAsyncStore() }
            .implements((any AdvStore).self) { $0 }
        let built = try await container.resolveAsync(AdvAsyncStore.self)
        #expect(try container.resolve(AdvAsyncStore.self) === built)  // What the primary does once built...
        #expect(try container.resolve((any AdvStore).self) === built)  // ...its alias does.
    }

    @Test("an alias of an async registration not built yet fails synchronously with the primary's asyncFactory")
    func aliasOfUnbuiltAsyncPrimaryFailsSynchronously() async {
        let container = InjectionContainer()
        container.registerAsync(AdvAsyncStore.self) { () async -> AdvAsyncStore in AdvAsyncStore() }
            .implements((any AdvStore).self) { $0 }
        #expect {
            try container.resolve((any AdvStore).self)
        } throws: { error in
            let error = error as? InjectionError
            return error?.kind == .asyncFactory && error?.description.contains("AdvAsyncStore") == true
        }
        let store = try? await container.resolveAsync((any AdvStore).self)
        let primary = try? await container.resolveAsync(AdvAsyncStore.self)
        #expect(store != nil && store === primary)
    }

    @Test("resolveAsync of an alias of an async registration runs the async factory like the primary does")
    func aliasOfAsyncPrimaryResolvesAsync() async throws {
        let container = InjectionContainer()
        container.registerAsync(AdvAsyncStore.self) { () async -> AdvAsyncStore in AdvAsyncStore() }
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
        container.registerAsync(AdvAsyncStore.self) { () async -> AdvAsyncStore in AdvAsyncStore() }
            .implements((any AdvStore).self) { $0 }
        #expect(throws: Never.self) { try container.verify() }
    }

    @Test("the graph shows an alias with its primary's lifetime, as implements documents")
    func aliasLifetimeInGraph() {
        let container = InjectionContainer()
        container.register(AdvSession.self, lifetime: .singleton) { AdvSession() }.implements((any AdvAuth).self) { $0 }
        let node = container.dependencyGraph().nodes.first { $0.name == "AdvAuth" }
        #expect(node?.lifetime == .singleton, "alias node: \(String(describing: node))")
    }

    @Test("a copied container's graph shows an alias with its primary's lifetime, as the original's does")
    func aliasLifetimeInCopiedGraph() {
        let original = InjectionContainer()
        original.register(AdvSession.self, lifetime: .singleton) { AdvSession() }.implements((any AdvAuth).self) { $0 }
        let copy = InjectionContainer(copying: original)
        let node = copy.dependencyGraph().nodes.first { $0.name == "AdvAuth" }
        #expect(node?.lifetime == .singleton, "alias node: \(String(describing: node))")
    }

    @Test("register(_:instance:) hands over an existing, non-Sendable object as a singleton")
    func registerInstance() throws {
        let container = InjectionContainer()
        let config = LaunchConfig()
        config.name = "made at launch"
        container.register(LaunchConfig.self, instance: config)
        let resolved = try container.resolve(LaunchConfig.self)
        #expect(resolved.name == "made at launch")
        container.reset()
        #expect(try container.resolve(LaunchConfig.self) === resolved, "a singleton survives resets")
    }

    @Test("a trailing closure is a factory, never an instance, even for a type a closure converts to (Any, Any?, a key of Any)")
    func trailingClosureIsAFactoryForAnyType() throws {
        enum AnythingKey: InjectionKey { typealias Value = Any }
        let container = InjectionContainer()
        let builds = Counter()
        // Single expressions, as launch code writes them (a closure of statements never matched `instance:`).
        container.register(Any.self) { CountedBuild(builds) }
        container.register(Any?.self) { CountedBuild(builds) }
        container.register(AnythingKey.self) { CountedBuild(builds) }
        let any = try container.resolve(Any.self)
        let optional = try container.resolve(Any?.self)
        let keyed = try container.resolve(AnythingKey.self)
        #expect(any is CountedBuild, "a closure was registered as the instance: \(type(of: any))")
        #expect(optional is CountedBuild, "a closure was registered as the instance")
        #expect(keyed is CountedBuild, "a closure was registered as the instance: \(type(of: keyed))")
        #expect(builds.value == 3)
        container.reset()
        #expect(try container.resolve(Any.self) as? CountedBuild !== any as? CountedBuild, "scoped by default, not a singleton instance")
        #expect(builds.value == 4)
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

    @Test("a supplied instance's postConstruction runs once whichever container resolves it first: a copy, or both at once")
    func instancePostConstructionRunsInTheCopy() throws {
        // The usual isolated test: the app registers an instance with a `postConstruction` at launch, the
        // process-wide container never resolves it, and each test resolves it in a copy of its own.
        let original = InjectionContainer()
        let runs = AdvLines()
        original.register(AdvPlain.self, instance: AdvPlain()).postConstruction { _ in runs.append("run") }
        let copies = (0..<3).map { _ in InjectionContainer(copying: original) }
        _ = try copies[0].resolve(AdvPlain.self)
        #expect(runs.all.count == 1, "resolved in a copy, the instance was post-constructed \(runs.all.count) times")
        _ = try copies[1].resolve(AdvPlain.self)
        _ = try original.resolve(AdvPlain.self)
        #expect(runs.all.count == 1, "the one instance was post-constructed \(runs.all.count) times")

        // Copies resolving on several threads at once: still once.
        let racing = AdvLines()
        let shared = InjectionContainer()
        shared.register(AdvPlain.self, instance: AdvPlain()).postConstruction { _ in racing.append("run") }
        let racers = (0..<8).map { _ in InjectionContainer(copying: shared) }
        #expect(runOnThreads(racers.count) { _ = try? racers[$0].resolve(AdvPlain.self) })
        #expect(racing.all.count == 1, "the one instance was post-constructed \(racing.all.count) times")
    }

    @Test("a supplied instance's postConstruction that fails runs again on the next resolve, in any copy")
    func instancePostConstructionRetriesAfterFailure() throws {
        let original = InjectionContainer()
        let runs = AdvLines()
        original.register(AdvPlain.self, instance: AdvPlain()).postConstruction { _ in
            runs.append("run")
            if runs.all.count == 1 { throw AdvFailure() }
        }
        let copy = InjectionContainer(copying: original)
        #expect(throws: InjectionError.self) { try copy.resolve(AdvPlain.self) }
        _ = try original.resolve(AdvPlain.self)
        _ = try copy.resolve(AdvPlain.self)
        #expect(runs.all.count == 2, "ran \(runs.all.count) times: once failing, once succeeding")
    }

    @Test("a container's default lifetime applies where register names none")
    func defaultLifetime() throws {
        let transient = InjectionContainer(defaultLifetime: .transient)
        #expect(transient.defaultLifetime == .transient)
        transient.register(Plain.self) { Plain() }
        #expect(try transient.resolve(Plain.self) !== (try transient.resolve(Plain.self)))
        transient.register(Plain.self, lifetime: .scoped) { Plain() }
        #expect(try transient.resolve(Plain.self) === (try transient.resolve(Plain.self)), "an explicit lifetime wins")
        #expect(InjectionContainer().defaultLifetime == .scoped)
        #expect(InjectionContainer(copying: transient).defaultLifetime == .transient)
    }

    @Test("removeAll removes every registration and instance, singletons included, and disposes them")
    func removeAll() throws {
        let container = InjectionContainer()
        let disposals = Counter()
        container.register(LiveSession.self, lifetime: .singleton) { LiveSession(disposals: disposals) }
        container.register(Plain.self) { Plain() }
        _ = try container.resolve(LiveSession.self)
        _ = try container.resolve(Plain.self)
        container.removeAll()
        #expect(disposals.value == 1)
        #expect(!container.isRegistered(LiveSession.self))
        #expect(!container.isRegistered(Plain.self))
        let error = #expect(throws: InjectionError.self) { try container.resolve(Plain.self) }
        #expect(error?.kind == .notRegistered)
    }

    @Test("removeAll inside a reset block lands with the block; registrations made after it stay")
    func removeAllInResetBlock() throws {
        let container = InjectionContainer()
        container.register(LiveSession.self) { LiveSession(disposals: Counter()) }
        container.reset {
            container.removeAll()
            #expect(!container.isRegistered(LiveSession.self))
            container.register(Plain.self) { Plain() }
        }
        #expect(!container.isRegistered(LiveSession.self))
        #expect(container.isRegistered(Plain.self))
        InjectionManager.withContainer(container) { InjectionManager.removeAll() }
        #expect(!container.isRegistered(Plain.self))
    }

    @Test("postConstruction steps chain on the handle and run in the order given, after the parameter's")
    func chainedPostConstruction() throws {
        let container = InjectionContainer()
        let steps = Steps()
        container.register(Plain.self) { Plain() } postConstruction: { _ in steps.append("parameter") }
            .postConstruction { _ in steps.append("first") }
            .postConstruction { _ in steps.append("second") }
        _ = try container.resolve(Plain.self)
        _ = try container.resolve(Plain.self)
        #expect(steps.all == ["parameter", "first", "second"], "each step runs once, in order")
    }

    @Test("inside resetCurrentContainer { }, steps chain on the latest handle, made in the block or before it")
    func chainedStepsInResetBlock() throws {
        let container = InjectionContainer()
        let steps = Steps()
        let before = container.register(Plain.self) { Plain() }
        container.reset {
            before.postConstruction { _ in steps.append("before") }
                .postConstruction { _ in steps.append("before, second") }
            container.register(LiveSession.self) { LiveSession(disposals: Counter()) }
                .postConstruction { _ in steps.append("in the block") }
                .implements((any Auth).self) { $0 }
        }
        _ = try container.resolve(Plain.self)
        _ = try container.resolve((any Auth).self)
        #expect(steps.all == ["before", "before, second", "in the block"])
    }

    @Test("a nil optional is not cached: the factory runs again; a non-nil result is cached")
    func nilOptionalIsNotCached() throws {
        let container = InjectionContainer()
        let runs = Counter()
        let available = Counter()
        container.register(Plain?.self) {
            runs.increment()
            return available.value > 0 ? Plain() : nil
        }
        #expect(try container.resolve(Plain?.self) == nil)
        #expect(try container.resolve(Plain?.self) == nil)
        #expect(runs.value == 2, "nil was not cached")
        available.increment()
        let made = try container.resolve(Plain?.self)
        #expect(made != nil)
        #expect(try container.resolve(Plain?.self) === made)
        #expect(runs.value == 3, "a non-nil result is cached")
        container.register(Plain?.self, lifetime: .singleton) {
            runs.increment()
            return nil
        }
        _ = try container.resolve(Plain?.self)
        _ = try container.resolve(Plain?.self)
        #expect(runs.value == 5, "singletons do not cache nil either")
    }

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

    // GettingStarted.md ("More ways to register"): "The other type resolves wherever the registered one does,
    // because it resolves the registered one. ... `resolveAsync` of it hops to the main actor or runs the async
    // factory, as `resolveAsync` of the registered type does." Whatever is registered for the type when the alias
    // is resolved decides, not the registration `implements` was called on.
    @Test("implements: resolveAsync of an alias runs the async factory, as resolveAsync of its primary does, after the primary is registered again with an async factory")
    func aliasFollowsPrimaryReRegisteredAsync() async {
        let container = InjectionContainer()
        container.register(AdvFStoreImpl.self) { AdvFStoreImpl() }.implements((any AdvFStore).self) { $0 }
        container.registerAsync(AdvFStoreImpl.self) { () async -> AdvFStoreImpl in AdvFStoreImpl() }  // e.g. a test's fake
        let primary = await resolveAsyncOffMainActor(container, AdvFStoreImpl.self)
        #expect(throws: Never.self, "resolveAsync of the primary") { try primary.get() }
        container.reset()
        let alias = await resolveAsyncOffMainActor(container, (any AdvFStore).self)
        #expect(throws: Never.self, "resolveAsync of the alias") { try alias.get() }
    }

    @Test("implements: resolveAsync of an alias hops to the main actor, as resolveAsync of its primary does, after the primary is registered again with isolation: MainActor")
    func aliasFollowsPrimaryReRegisteredAsMainActor() async {
        let container = InjectionContainer()
        container.register(AdvFPlainScreen.self) { AdvFPlainScreen() }.implements((any AdvFScreen).self) { $0 }
        container.register(AdvFPlainScreen.self, isolation: MainActor.shared) { AdvFPlainScreen() }
        let primary = await resolveAsyncOffMainActor(container, AdvFPlainScreen.self)
        #expect(throws: Never.self, "resolveAsync of the primary off the main actor") { try primary.get() }
        container.reset()
        let alias = await resolveAsyncOffMainActor(container, (any AdvFScreen).self)
        #expect(throws: Never.self, "resolveAsync of the alias off the main actor") { try alias.get() }
    }

    // InjectionContainer.verify(): "Each missing registration is reported once, with the chain that needed
    // it"; Diagnostics.md: `try InjectionManager.verify()` "checks every registration at once". verify() does not
    // run an alias of a main-actor or async type, but once that type is gone every resolve of the alias fails
    // with notRegistered, which verify() reports.
    @Test("verify() reports an alias whose main-actor or async primary was unregistered, as it does for a plain primary's alias")
    func verifyReportsAliasOfMissingPrimary() async {
        let plain = InjectionContainer()
        plain.register(AdvFStoreImpl.self) { AdvFStoreImpl() }.implements((any AdvFStore).self) { $0 }
        plain.unregister(AdvFStoreImpl.self)
        #expect(throws: InjectionError.self, "plain primary: verify() reports the alias") { try plain.verify() }

        let main = InjectionContainer()
        main.register(AdvFMainScreen.self, isolation: MainActor.shared) { AdvFMainScreen() }.implements((any AdvFScreen).self) { $0 }
        main.unregister(AdvFMainScreen.self)
        let viaAlias = await resolveAsyncOffMainActor(main, (any AdvFScreen).self)
        #expect((try? viaAlias.get()) == nil, "every resolve of the alias fails: notRegistered")
        #expect(throws: InjectionError.self, "main-actor primary: verify() reports the alias") { try main.verify() }

        let async = InjectionContainer()
        async.registerAsync(AdvFStoreImpl.self) { () async -> AdvFStoreImpl in AdvFStoreImpl() }.implements((any AdvFStore).self) { $0 }
        async.unregister(AdvFStoreImpl.self)
        #expect(throws: InjectionError.self, "async primary: verify() reports the alias") { try async.verify() }
    }
}

private final class SharedFlagsService: Sendable {}
private final class SharedFlagsTransient: Sendable {}

// A copy of a container, and a handle adding `postConstruction`, read a registration while other threads
// resolve and reset it: that must race with nothing. These fail under ThreadSanitizer
// (`swift test --sanitize=thread`) if it does.
@Suite("Copies and handles while the container resolves")
struct RegistrationSharingTests {
    @Test("copying a container while another thread resolves and resets it races with nothing")
    func copyingWhileResolving() {
        let container = InjectionContainer()
        container.register(SharedFlagsService.self) { SharedFlagsService() }
        container.register(SharedFlagsTransient.self, lifetime: .transient) { SharedFlagsTransient() }
        let finished = runOnThreads(2) { index in
            for _ in 0..<2_000 {
                if index == 0 {
                    _ = try? container.resolve(SharedFlagsService.self)    // caches
                    _ = try? container.resolve(SharedFlagsTransient.self)  // runs its factory
                    container.reset()                      // empties
                } else {
                    _ = InjectionContainer(copying: container)             // copies every registration
                }
            }
        }
        #expect(finished)
        #expect(InjectionContainer(copying: container).isRegistered(SharedFlagsService.self))
    }

    @Test("adding postConstruction through a handle while another thread resolves the type races with nothing")
    func addingPostConstructionWhileResolving() throws {
        let container = InjectionContainer()
        let handle = container.register(SharedFlagsService.self) { SharedFlagsService() }
        let finished = runOnThreads(2) { index in
            if index == 0 {
                for _ in 0..<2_000 {
                    _ = try? container.resolve(SharedFlagsService.self)
                    container.reset()
                }
            } else {
                var current = handle
                for _ in 0..<2_000 { current = current.postConstruction { _ in } }
            }
        }
        #expect(finished)
        _ = try container.resolve(SharedFlagsService.self)
    }
}
