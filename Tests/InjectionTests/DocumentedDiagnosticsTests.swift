import Foundation
import Injection
import InjectionTesting
import Testing

// What Diagnostics.md and the API docs promise of diagnostics, typed keys, optionals and lifetimes, checked
// against real runs: every documented message, graph and report, character for character where the docs
// quote one.

// MARK: - The services of Diagnostics.md (API, Clock, ViewModel come from Support/Fixtures.swift)

private struct Offline: Error, CustomStringConvertible {
    let reason: String
    var description: String { "Offline(reason: \"\(reason)\")" }
}
private final class Store: Sendable {
    let api: any API
    init(api: any API) { self.api = api }
}
private final class Auth: Sendable { init(tokens: Tokens) {} }
private final class Tokens: Sendable { init(auth: Auth) {} }
private final class FeedService: Sendable {
    init() throws { throw Offline(reason: "no route to host") }
}

// MARK: - Other types

/// A class that is both a typed key (for a String) and a registered type.
private final class R3Both: InjectionKey, Sendable {
    typealias Value = String
}
private final class R3Holder: Sendable {
    let value: String
    init(value: String) { self.value = value }
}
private protocol R3Proto: AnyObject, Sendable {}
private final class R3Impl: R3Proto {}
private enum R3OptionalKey: InjectionKey { typealias Value = R3Impl? }
private enum R3ProtoKey: InjectionKey { typealias Value = any R3Proto }
private enum R3FunctionKey: InjectionKey { typealias Value = @Sendable (Int) -> String }

private final class R3Session: Sendable {}
private final class R3Repository: Sendable {
    let session: R3Session
    init(session: R3Session) { self.session = session }
}
private final class R3A: Sendable {}
private final class R3B: Sendable {
    init(a: R3A) {}
}
private struct R3NotReady: Error {}
private final class R3Thing: Sendable {}

private final class R3Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func next() -> Int { lock.withLock { count += 1; return count } }
    var value: Int { lock.withLock { count } }
}

@Suite("Diagnostics as documented")
struct DocumentedDiagnosticsTests {
    // MARK: Diagnostics.md examples

    @Test("Diagnostics.md: verify() of the documented broken graph gives the documented message, text graph and DOT")
    func documentedVerifyExample() throws {
        let container = InjectionContainer()
        try InjectionManager.withContainer(container) { () throws in
            // registerLiveServices() minus API, plus the Auth/Tokens cycle with Inject() and FeedService.
            InjectionManager.register((any Clock).self, lifetime: .singleton) { SystemClock() }
            InjectionManager.register(Store.self) { try Store(api: InjectionManager.resolve()) }
            InjectionManager.register(ViewModel.self, lifetime: .transient) { ViewModel() }
            InjectionManager.register(Auth.self) { Auth(tokens: Inject()) }
            InjectionManager.register(Tokens.self) { Tokens(auth: Inject()) }
            InjectionManager.register(FeedService.self) { try FeedService() }
            let error = #expect(throws: InjectionError.self) { try InjectionManager.verify() }
            let expected = """
                Injection: verify() found 3 problems in 6 registrations:
                  1. Injection: dependency cycle: Auth → Tokens → Auth. Break it by removing one of these dependencies, or by setting the back-reference after construction (register(_:lifetime:factory:postConstruction:)) or on first use (InjectLazy).
                  2. Injection: the factory for FeedService threw Offline(reason: "no route to host"). Nothing was cached, so the next resolve runs the factory again; fix the factory or what it needs.
                  3. Injection: no registration for API (resolving Store → API). Register it before it is resolved, e.g. at launch: InjectionManager.register((any API).self) { ... }
                """
            #expect(error?.description == expected)
            let graph = InjectionManager.dependencyGraph()
            #expect(graph.description == "Auth → Tokens\nStore → API\nTokens → Auth\nViewModel → API\nClock\nFeedService")
            let dot = """
                digraph Injection {
                    rankdir=LR;
                    node [shape=box, style=rounded, fontname=Helvetica];
                    "API" [label="API\\nnot registered", color=red, fontcolor=red, style="rounded,dashed"];
                    "Auth" [label="Auth\\nscoped"];
                    "Clock" [label="Clock\\nsingleton"];
                    "FeedService" [label="FeedService\\nscoped"];
                    "Store" [label="Store\\nscoped"];
                    "Tokens" [label="Tokens\\nscoped"];
                    "ViewModel" [label="ViewModel\\ntransient"];
                    "Auth" -> "Tokens";
                    "Store" -> "API";
                    "Tokens" -> "Auth";
                    "ViewModel" -> "API";
                }

                """
            #expect(graph.dot == dot)
        }
    }

    @Test("Diagnostics.md: asking for an optional by mistake gives the documented message")
    func optionalByMistakeMessage() {
        let container = InjectionContainer()
        let error = #expect(throws: InjectionError.self) { try container.resolve((any API)?.self) }
        #expect(error?.description == """
            Injection: no registration for Optional<API>. Register it before it is resolved, e.g. at launch: InjectionManager.register(Optional<API>.self) { ... } If you meant the non-optional type, write Inject((any API).self): Inject() into an optional asks for Optional<API> itself.
            """)
    }

    // MARK: dependencyGraph()

    @Test("dependencyGraph(): a class registered both as a type and as a typed key shows both registrations")
    func graphKeepsKeyAndTypeApart() {
        let container = InjectionContainer()
        container.register(R3Both.self, lifetime: .singleton) { R3Both() }   // the type
        container.register(R3Both.self, lifetime: .transient) { "key" }      // the key
        let graph = container.dependencyGraph()
        // "nodes: every registered type with its lifetime": two registrations, two lifetimes.
        #expect(graph.nodes.count == 2, "\(graph.nodes)")
        #expect(Set(graph.nodes.compactMap(\.lifetime)) == [.singleton, .transient], "\(graph.nodes)")
    }

    @Test("dependencyGraph(): register(_:instance:) shows as singleton, keys by their key name")
    func graphOfInstancesAndKeys() {
        let container = InjectionContainer(defaultLifetime: .transient)
        container.register(R3Thing.self, instance: R3Thing())
        container.register(R3ProtoKey.self, instance: R3Impl())
        container.register(R3Session.self) { R3Session() }
        let graph = container.dependencyGraph()
        #expect(graph.nodes == [
            .init(name: "R3ProtoKey", lifetime: .singleton),
            .init(name: "R3Session", lifetime: .transient),
            .init(name: "R3Thing", lifetime: .singleton),
        ])
    }

    // MARK: Typed keys

    @Test("typed key with an optional Value: nil is not cached, a value is")
    func optionalKeyNilIsNotCached() throws {
        let container = InjectionContainer()
        let calls = R3Counter()
        container.register(R3OptionalKey.self) { calls.next() < 3 ? nil : R3Impl() }
        #expect(try container.resolve(R3OptionalKey.self) == nil)
        #expect(try container.resolve(R3OptionalKey.self) == nil)
        let first = try container.resolve(R3OptionalKey.self)
        #expect(first != nil)
        #expect(try container.resolve(R3OptionalKey.self) === first)
        #expect(calls.value == 3)
    }

    @Test("typed key with an optional Value under .weak: nil is no error; an instance is kept while held")
    func optionalKeyWeak() throws {
        let container = InjectionContainer()
        let calls = R3Counter()
        container.register(R3OptionalKey.self, lifetime: .weak) { calls.next() == 1 ? nil : R3Impl() }
        #expect(try container.resolve(R3OptionalKey.self) == nil)
        let held = try container.resolve(R3OptionalKey.self)
        #expect(held != nil)
        #expect(try container.resolve(R3OptionalKey.self) === held)
        #expect(calls.value == 2)
    }

    @Test("typed key with a function Value registers, resolves, and is named by the key")
    func functionKey() throws {
        let container = InjectionContainer()
        #expect(!container.isRegistered(R3FunctionKey.self))
        container.register(R3FunctionKey.self) { { "n\($0)" } }
        #expect(container.isRegistered(R3FunctionKey.self))
        #expect(!container.isRegistered((@Sendable (Int) -> String).self))
        #expect(try container.resolve(R3FunctionKey.self)(4) == "n4")
        container.unregister(R3FunctionKey.self)
        let error = #expect(throws: InjectionError.self) { try container.resolve(R3FunctionKey.self) }
        #expect(error?.typeName == "R3FunctionKey")
    }

    @Test("register(_:instance:) of a typed key: isRegistered, resolve the same object, unregister")
    func keyInstance() throws {
        let container = InjectionContainer()
        let impl = R3Impl()
        container.register(R3ProtoKey.self, instance: impl)
        #expect(container.isRegistered(R3ProtoKey.self))
        #expect(!container.isRegistered((any R3Proto).self))
        #expect(try container.resolve(R3ProtoKey.self) === impl)
        container.reset()
        #expect(try container.resolve(R3ProtoKey.self) === impl)
        container.unregister(R3ProtoKey.self)
        #expect(!container.isRegistered(R3ProtoKey.self))
        #expect(throws: InjectionError.self) { try container.resolve(R3ProtoKey.self) }
    }

    @Test("isRegistered of a key inside resetCurrentContainer { } sees the block's register and unregister")
    func keyIsRegisteredInBlock() {
        let container = InjectionContainer()
        container.register(R3ProtoKey.self) { R3Impl() }
        container.reset {
            container.unregister(R3ProtoKey.self)
            #expect(!container.isRegistered(R3ProtoKey.self))
            container.register(R3FunctionKey.self) { _ in "x" }
            #expect(container.isRegistered(R3FunctionKey.self))
            #expect(!container.isRegistered((@Sendable (Int) -> String).self))
        }
        #expect(!container.isRegistered(R3ProtoKey.self))
        #expect(container.isRegistered(R3FunctionKey.self))
    }

    // MARK: Optionals

    @Test("T? registered: resolving T fails with notRegistered naming T, and T? resolves")
    func optionalRegisteredNonOptionalAsked() throws {
        let container = InjectionContainer()
        container.register(R3Thing?.self) { R3Thing() }
        let error = #expect(throws: InjectionError.self) { try container.resolve(R3Thing.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.typeName == "R3Thing")
        #expect(try container.resolve(R3Thing?.self) != nil)
    }

    @Test(".weak T? whose factory returns nil: no error, not kept, factory runs again")
    func weakOptionalNil() throws {
        let container = InjectionContainer()
        let calls = R3Counter()
        container.register(R3Thing?.self, lifetime: .weak) { _ = calls.next(); return nil }
        #expect(try container.resolve(R3Thing?.self) == nil)
        #expect(try container.resolve(R3Thing?.self) == nil)
        #expect(calls.value == 2)
    }

    // MARK: Lifetimes and defaultLifetime

    @Test("defaultLifetime is kept by a copy of the container")
    func defaultLifetimeCopied() throws {
        let container = InjectionContainer(defaultLifetime: .transient)
        let copy = InjectionContainer(copying: container)
        #expect(copy.defaultLifetime == .transient)
        copy.register(R3Thing.self) { R3Thing() }
        #expect(try copy.resolve(R3Thing.self) !== copy.resolve(R3Thing.self))
    }

    @Test("defaultLifetime .weak with a value type fails with weakNeedsClass naming the type")
    func defaultWeakValueType() {
        let container = InjectionContainer(defaultLifetime: .weak)
        container.register(Int.self) { 3 }
        let error = #expect(throws: InjectionError.self) { try container.resolve(Int.self) }
        #expect(error?.kind == .weakNeedsClass)
        #expect(error?.typeName == "Int")
    }

    @Test("a transient whose postConstruction resolves a type needing it fails with a cycle, in bounded time")
    func transientPostConstructionCycle() async {
        // In its own process: an unbounded recursion would crash, a hang is ended by the watchdog (exit 42).
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            Thread { Thread.sleep(forTimeInterval: waitLimit); FileHandle.standardError.write(Data("hung\n".utf8)); exit(42) }.start()
            let container = InjectionContainer()
            container.register(R3A.self, lifetime: .transient) { R3A() } postConstruction: { _ in
                _ = try InjectionManager.resolve(R3B.self)
            }
            container.register(R3B.self) { try R3B(a: InjectionManager.resolve()) }
            do throws(InjectionError) {
                _ = try container.resolve(R3A.self)
                FileHandle.standardError.write(Data("resolved\n".utf8))
                exit(1)
            } catch {
                FileHandle.standardError.write(Data("\(error.kind) \(error.chain) \(error)\n".utf8))
                exit(error.kind == .cycle ? 0 : 1)
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("cycle [\"R3A\", \"R3B\", \"R3A\"]"), "\(output)")
    }

    @Test("a transient type that needs itself: the cycle message does not suggest postConstruction, which cannot close it")
    func transientSelfCycleMessage() {
        let container = InjectionContainer()
        container.register(R3Thing.self, lifetime: .transient) { _ = try InjectionManager.resolve(R3Thing.self); return R3Thing() }
        let error = #expect(throws: InjectionError.self) { try container.resolve(R3Thing.self) }
        #expect(error?.kind == .cycle)
        #expect(error?.chain == ["R3Thing", "R3Thing"])
        // Docs: "With `.transient` nothing is cached, so it cannot close a cycle."
        #expect(error?.description.contains("postConstruction") == false, "\(error?.description ?? "")")
    }

    // MARK: verify()

    @Test("verify() reports a postConstruction that throws")
    func verifyReportsPostConstruction() {
        let container = InjectionContainer()
        container.register(R3Thing.self) { R3Thing() } postConstruction: { _ in throw R3NotReady() }
        let error = #expect(throws: InjectionError.self) { try container.verify() }
        #expect(error?.problems.count == 1)
        #expect(error?.problems.first?.description.hasPrefix("Injection: the postConstruction of R3Thing threw R3NotReady()") == true,
                "\(error?.description ?? "no error")")
    }

    @Test("verify() reports a .weak registration of a value type")
    func verifyReportsWeakValueType() {
        let container = InjectionContainer()
        container.register(Int.self, lifetime: .weak) { 3 }
        let error = #expect(throws: InjectionError.self) { try container.verify() }
        #expect(error?.problems.first?.kind == .weakNeedsClass, "\(error?.description ?? "no error")")
    }

    // MARK: liveInstancesFromPreviousScopes()

    @Test("liveInstancesFromPreviousScopes lists instances evicted by unregister and by re-registration, keys by key name")
    func liveInstancesEachEviction() throws {
        let container = InjectionContainer()
        container.tracksEvictedInstances = true
        container.register(R3Session.self) { R3Session() }
        container.register(R3ProtoKey.self) { R3Impl() }
        container.register(R3Thing.self) { R3Thing() }
        let session = try container.resolve(R3Session.self)
        let keyed = try container.resolve(R3ProtoKey.self)
        let thing = try container.resolve(R3Thing.self)
        container.unregister(R3Session.self)
        container.register(R3ProtoKey.self) { R3Impl() }
        container.reset()
        #expect(container.liveInstancesFromPreviousScopes() == ["R3ProtoKey", "R3Session", "R3Thing"])
        withExtendedLifetime((session, keyed, thing)) {}
    }

    // MARK: diagnosticsHandler

    @Test("registering a typed key again while a cached instance holds it is reported, naming the key and the fix")
    func keyReRegistrationReported() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            container.register(R3ProtoKey.self) { R3Impl() }
            container.register(R3Holder.self) { _ = Inject(R3ProtoKey.self); return R3Holder(value: "h") }
            _ = try InjectionManager.withContainer(container) { () throws(InjectionError) in
                try InjectionManager.resolve(R3Holder.self)
            }
            container.register(R3ProtoKey.self) { R3Impl() }
            let report = try #require(lines.about("R3ProtoKey").first, "\(lines.all)")
            #expect(report.contains("R3Holder"))
            #expect(report.contains("resetCurrentContainer { register(R3ProtoKey.self) { ... } }"))
        }
    }

    @Test("registering a .transient type again while a cached instance holds one it built is reported")
    func transientReRegistrationReported() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            container.register(R3Session.self, lifetime: .transient) { R3Session() }
            container.register(R3Repository.self) { try R3Repository(session: InjectionManager.resolve()) }
            _ = try InjectionManager.withContainer(container) { () throws(InjectionError) in
                try InjectionManager.resolve(R3Repository.self)
            }
            container.register(R3Session.self, lifetime: .transient) { R3Session() }   // the forgotten reset
            #expect(lines.about("R3Session was registered again").count == 1, "\(lines.all)")
        }
    }

    @Test("a stale handle after unregister: .postConstruction and .implements register nothing, and are reported")
    func staleHandleAfterUnregister() {
        withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            let handle = container.register(R3Impl.self) { R3Impl() }
            container.unregister(R3Impl.self)
            handle.postConstruction { _ in }
            handle.implements((any R3Proto).self) { $0 }
            #expect(!container.isRegistered(R3Impl.self))
            #expect(!container.isRegistered((any R3Proto).self))
            #expect(lines.about("stale handle of R3Impl").count == 2, "\(lines.all)")
        }
    }

    @Test("Diagnostics.md: the registered-again report is one line, as the doc's example shows it")
    func registeredAgainReportText() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            container.register(R3Session.self) { R3Session() }
            container.register(R3Repository.self) { try R3Repository(session: InjectionManager.resolve()) }
            _ = try InjectionManager.withContainer(container) { () throws(InjectionError) in
                try InjectionManager.resolve(R3Repository.self)
            }
            container.register(R3Session.self) { R3Session() }
            let report = try #require(lines.about("R3Session").first)
            // As Diagnostics.md shows it: one line.
            #expect(report == """
                Injection: R3Session was registered again while cached instances still hold the old one: R3Repository. \
                They keep it until the next reset. Register it inside a reset, so they are rebuilt too: \
                resetCurrentContainer { register(R3Session.self) { ... } }
                """)
        }
    }

    @Test("the registered-again report names only holders whose current factory needs the type")
    func noReportForAHolderWhoseNewFactoryDoesNotNeedIt() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            container.register(R3Session.self) { R3Session() }
            // Version 1 of the repository needs the session; it is built once, then replaced.
            container.register(R3Holder.self) { _ = try InjectionManager.resolve(R3Session.self); return R3Holder(value: "v1") }
            _ = try InjectionManager.withContainer(container) { () throws(InjectionError) in try InjectionManager.resolve(R3Holder.self) }
            // Version 2 needs nothing; it is built and cached, holding no session.
            container.register(R3Holder.self) { R3Holder(value: "v2") }
            #expect(try container.resolve(R3Holder.self).value == "v2")
            _ = try container.resolve(R3Session.self)
            container.register(R3Session.self) { R3Session() }
            // Nothing cached holds the old session: R3Holder v2 never resolved it.
            #expect(lines.about("R3Session was registered again").isEmpty, "\(lines.all)")
        }
    }

    @Test("registering an instance again while a cached instance holds the old one is reported")
    func instanceReRegistrationReported() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            container.register(R3Session.self, instance: R3Session())
            container.register(R3Repository.self) { try R3Repository(session: InjectionManager.resolve()) }
            _ = try InjectionManager.withContainer(container) { () throws(InjectionError) in try InjectionManager.resolve(R3Repository.self) }
            container.register(R3Session.self, instance: R3Session())
            #expect(lines.about("R3Session was registered again").count == 1, "\(lines.all)")
        }
    }

    // MARK: More Diagnostics.md messages

    @Test("Diagnostics.md: a factory that throws below Store gives the documented message and caches nothing")
    func documentedFactoryFailed() throws {
        let container = InjectionContainer()
        let attempts = R3Counter()
        container.register((any API).self) { if attempts.next() == 1 { throw Offline(reason: "no route to host") }; return LiveAPI() }
        container.register(Store.self) { try Store(api: InjectionManager.resolve()) }
        let error = #expect(throws: InjectionError.self) { try container.resolve(Store.self) }
        #expect(error?.description == """
            Injection: the factory for API threw Offline(reason: "no route to host") (resolving Store → API). Nothing was cached, so the next resolve runs the factory again; fix the factory or what it needs.
            """)
        #expect(error?.underlyingError is Offline)
        _ = try container.resolve(Store.self)
        #expect(attempts.value == 2)
    }

    @Test("Diagnostics.md: a postConstruction that throws gives the documented message and evicts Store and Feed")
    func documentedPostConstructionFailed() throws {
        let container = InjectionContainer()
        let stores = R3Counter(), feeds = R3Counter(), fail = R3Counter()
        container.register((any API).self) { LiveAPI() }
        container.register(R3Repository.self) { _ = feeds.next(); return try R3Repository(session: InjectionManager.resolve()) }
        container.register(R3Session.self) { _ = stores.next(); return R3Session() } postConstruction: { _ in
            if fail.next() == 1 { throw R3NotReady() }
        }
        let error = #expect(throws: InjectionError.self) { try container.resolve(R3Repository.self) }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.description == """
            Injection: the postConstruction of R3Session threw R3NotReady() (resolving R3Repository → R3Session). The instance was evicted, with everything the same resolve built; objects that already received them keep them. The next resolve builds them again.
            """)
        _ = try container.resolve(R3Repository.self)
        #expect(stores.value == 2)
        #expect(feeds.value == 2)
    }

    @Test("Diagnostics.md: resolving inside resetCurrentContainer { } gives the documented message")
    func documentedResolvedDuringReset() {
        let container = InjectionContainer()
        container.register(Store.self) { Store(api: LiveAPI()) }
        container.reset {
            let error = #expect(throws: InjectionError.self) { try container.resolve(Store.self) }
            #expect(error?.description == "Injection: Store was resolved inside resetCurrentContainer { }, before the new scope exists. Only register inside the block; resolve after it returns.")
        }
    }

    @Test("Diagnostics.md: InjectLazy read after its container was released gives the documented message")
    func documentedContainerReleased() {
        var container: InjectionContainer? = InjectionContainer()
        container!.register(FeedService.self) { try FeedService() }
        let lazy = InjectionManager.withContainer(container!) { InjectLazy(FeedService.self) }
        container = nil
        let error = #expect(throws: InjectionError.self) { try lazy.resolve() }
        #expect(error?.description == "Injection: InjectLazy<FeedService> was read after its container was released, so there is nothing to resolve FeedService from. A handle does not keep its container alive: keep the container for as long as the object holding the handle, or read the handle while the container exists.")
    }

    @Test("an InjectLazy of a typed key read after its container was released names the handle as written")
    func containerReleasedKeyName() {
        var container: InjectionContainer? = InjectionContainer()
        container!.register(R3ProtoKey.self) { R3Impl() }
        let lazy = InjectionManager.withContainer(container!) { InjectLazy(R3ProtoKey.self) }
        container = nil
        let error = #expect(throws: InjectionError.self) { try lazy.resolve() }
        #expect(error?.kind == .containerReleased)
        #expect(error?.description.hasPrefix("Injection: InjectLazy<R3ProtoKey> was read after its container was released") == true)
    }

    @Test("an optional of a private type asked by mistake suggests the non-optional type")
    func optionalOfPrivateTypeHints() {
        let container = InjectionContainer()
        let error = #expect(throws: InjectionError.self) { try container.resolve(R3Thing?.self) }
        #expect(error?.description.contains("If you meant the non-optional type, write Inject(R3Thing.self)") == true)
    }
}
