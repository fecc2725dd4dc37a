import Foundation
import Injection
import Testing

// Re-registering a type that cached instances hold (a forgotten reset) is reported through
// `InjectionManager.diagnosticsHandler`, once per type, naming the holders and the fix, also when they hold
// it through an `implements` alias or as a `.weak` instance; a re-registration inside
// `resetCurrentContainer { }`, or with nothing cached that depends on it, is silent. The handler is
// process-wide, so these tests take turns.

private final class StaleUserSession: Sendable {}
private final class StaleFeedRepository: Sendable {
    let session: StaleUserSession
    init(session: StaleUserSession = Inject()) { self.session = session }
}

/// A container whose cached `StaleFeedRepository` holds its `StaleUserSession`.
private func containerWithACachedDependent() throws -> InjectionContainer {
    let container = InjectionContainer()
    container.register(StaleUserSession.self) { StaleUserSession() }
    container.register(StaleFeedRepository.self) { StaleFeedRepository() }
    _ = try InjectionManager.withContainer(container) { () throws(InjectionError) in
        try InjectionManager.resolve(StaleFeedRepository.self)
    }
    return container
}

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

private protocol HandleVersioned: AnyObject, Sendable {}
/// Says which registration's factory built it.
private final class HandleVersion: HandleVersioned {
    let version: Int
    init(_ version: Int) { self.version = version }
}

private final class StaleCard: Sendable {}
private struct StaleCardBuilder: Builder, Sendable { typealias BuildResult = StaleCard }
/// Builds its card in its factory: it holds what the builder registered then built.
private final class StaleDeck: Sendable {
    let card: StaleCard
    init() { card = StaleCardBuilder().build() }
}

private final class DiagLoneAPI: Sendable {}
private protocol DiagLoneScreen: Sendable {}
private struct DiagLoneScreenModel: Builder, Sendable { typealias BuildResult = any DiagLoneScreen }
/// A screen whose implementation injects the service.
private final class DiagLoneScreenImpl: DiagLoneScreen, Buildable {
    let api: DiagLoneAPI
    init(builder: DiagLoneScreenModel) { api = Inject() }
}
/// Cached, and builds a screen in its factory: through the builder, it holds the screen's service.
private final class DiagScreenHolder: Sendable {
    let screen: any DiagLoneScreen
    init() { screen = DiagLoneScreenModel().build() }
}

/// The service a holder uses only when its switch says so.
private final class CondService: Sendable {}
/// What a `CondHolder` factory does on its next run: resolve the service or not, then fail or not.
private final class CondSwitch: @unchecked Sendable {  // Set by the test between resolves, on its own thread.
    var usesService = false, fails = false
}
/// Cached; its factory resolves `CondService` only when `uses` is set.
private final class CondHolder: Sendable {
    let service: CondService?
    init(service: CondService?) { self.service = service }
}
private struct CondFailure: Error {}

/// A container whose `CondHolder` factory follows `toggle`, reporting to a collector of its own.
private func containerWithConditionalHolder(_ toggle: CondSwitch) -> (InjectionContainer, DiagnosticLines) {
    let container = InjectionContainer()
    let lines = DiagnosticLines()
    container.diagnosticsHandler = { lines.append($0) }
    container.register(CondService.self) { CondService() }
    container.register(CondHolder.self) {
        let service = toggle.usesService ? Inject(CondService.self) : nil
        if toggle.fails { throw CondFailure() }
        return CondHolder(service: service)
    }
    return (container, lines)
}

/// A container with the screen's builder and its service, reporting to a collector of its own.
private func containerWithScreenBuilder() -> (InjectionContainer, DiagnosticLines) {
        let container = InjectionContainer()
        let lines = DiagnosticLines()
        container.diagnosticsHandler = { lines.append($0) }
        container.register(DiagLoneAPI.self) { DiagLoneAPI() }
        container.register(DiagLoneScreenModel.self, building: DiagLoneScreenImpl.self)
        return (container, lines)
}

private final class SingletonAPIClient: Sendable {}
private final class SingletonTracker: Sendable {
    let api: SingletonAPIClient
    init(api: SingletonAPIClient = Inject()) { self.api = api }
}

@Suite("Re-registration reports", .serialized)
struct ReRegistrationReportTests {
    @Test("a singleton holder is told that a reset does not rebuild it, and the suggested line keeps the singleton's lifetime")
    func singletonHolderAdvice() throws {
        let container = InjectionContainer()
        let lines = DiagnosticLines()
        container.diagnosticsHandler = { lines.append($0) }
        container.register(SingletonAPIClient.self, lifetime: .singleton) { SingletonAPIClient() }
        container.register(SingletonTracker.self, lifetime: .singleton) { SingletonTracker() }
        container.register(StaleUserSession.self, lifetime: .singleton) { StaleUserSession() }
        container.register(StaleFeedRepository.self) { StaleFeedRepository() }
        let tracker = try container.resolve(SingletonTracker.self)
        _ = try container.resolve(StaleFeedRepository.self)
        container.register(SingletonAPIClient.self, lifetime: .singleton) { SingletonAPIClient() }
        #expect(lines.about("SingletonAPIClient") == ["""
            Injection: SingletonAPIClient was registered again while cached instances still hold the old one: \
            SingletonTracker. A reset does not rebuild a singleton: SingletonTracker keeps it until registered again. \
            Register SingletonTracker again too, or make it .scoped.
            """])
        // What it says is true: a reset leaves the singleton holding the old client.
        container.reset()
        #expect(try container.resolve(SingletonTracker.self) === tracker)
        _ = try container.resolve(StaleFeedRepository.self)
        // A scoped holder of a singleton: the suggested line keeps `lifetime: .singleton`.
        container.register(StaleUserSession.self, lifetime: .singleton) { StaleUserSession() }
        let report = try #require(lines.about("StaleUserSession").first)
        #expect(report.contains("resetCurrentContainer { register(StaleUserSession.self, lifetime: .singleton) { ... } }"))
    }

    @Test("re-registering a type that cached instances hold is reported once, naming them and the fix")
    func reRegistrationIsReported() throws {
        try withRecordedDiagnostics { lines in
            let container = try containerWithACachedDependent()
            container.register(StaleUserSession.self) { StaleUserSession() }   // the forgotten reset
            let reports = lines.about("StaleUserSession")
            #expect(reports.count == 1)
            let report = try #require(reports.first)
            #expect(report.hasPrefix("Injection: StaleUserSession was registered again"))
            #expect(report.contains("StaleFeedRepository"))
            #expect(report.contains("resetCurrentContainer { register(StaleUserSession.self) { ... } }"))

            _ = try container.resolve(StaleUserSession.self)
            container.register(StaleUserSession.self) { StaleUserSession() }
            #expect(lines.about("StaleUserSession").count == 1, "once per type")
        }
    }

    @Test("a container's own diagnosticsHandler receives its reports, and the process-wide handler does not")
    func perContainerHandler() throws {
        try withRecordedDiagnostics { processWide in
            let container = try containerWithACachedDependent()
            let own = DiagnosticLines()
            container.diagnosticsHandler = { own.append($0) }
            container.register(StaleUserSession.self) { StaleUserSession() }
            #expect(own.about("StaleUserSession").count == 1)
            #expect(processWide.about("StaleUserSession").isEmpty)
            // A container with no handler of its own, and a copy of one that has, report to the process.
            let other = try containerWithACachedDependent()
            other.register(StaleUserSession.self) { StaleUserSession() }
            let copy = InjectionContainer(copying: container)
            #expect(copy.diagnosticsHandler == nil)
            #expect(processWide.about("StaleUserSession").count == 1)
            #expect(own.about("StaleUserSession").count == 1)
            container.diagnosticsHandler = nil
            #expect(container.diagnosticsHandler == nil)
        }
    }

    @Test("a container's handler stays one call deep however often the container records what it observes")
    func handlerDoesNotGrow() throws {
        let container = InjectionContainer()
        let lines = DiagnosticLines()
        container.diagnosticsHandler = { lines.append($0) }
        container.register(StaleUserSession.self) { StaleUserSession() }
        container.register(StaleFeedRepository.self) { StaleFeedRepository() }
        // Each reset forgets edges, each first build records them, each graph reads them: all through the
        // lock that also guards the handler. A handler re-wrapped on every use would nest 200,000 deep.
        for _ in 0..<50_000 {
            container.reset()
            _ = try container.resolve(StaleFeedRepository.self)
            _ = container.dependencyGraph()
        }
        // On a small stack: a deep chain of wrappers would overflow it.
        let finished = Gate()
        let thread = Thread {
            container.register(StaleUserSession.self) { StaleUserSession() }
            finished.open()
        }
        thread.stackSize = 64 << 10
        thread.start()
        #expect(finished.wait())
        #expect(lines.about("StaleUserSession").count == 1)
    }

    @Test("a builder is no holder: a screen built at top level, whose implementation injects the service, is not reported")
    func builderIsNoHolder() throws {
        let (container, lines) = containerWithScreenBuilder()
        _ = try InjectionManager.withContainer(container) { try InjectionManager.build(DiagLoneScreenModel()) }
        container.register(DiagLoneAPI.self) { DiagLoneAPI() }
        #expect(lines.all == [], "nothing cached holds DiagLoneAPI: the screen was handed out, not cached")
    }

    @Test("a cached instance that built through a builder is named as the holder, not the builder")
    func holderThroughBuilderIsNamed() throws {
        let (container, lines) = containerWithScreenBuilder()
        container.register(DiagScreenHolder.self) { DiagScreenHolder() }
        _ = try container.resolve(DiagScreenHolder.self)
        container.register(DiagLoneAPI.self) { DiagLoneAPI() }
        let report = try #require(lines.all.first)
        #expect(lines.all.count == 1)
        #expect(report.contains("still hold the old one: DiagScreenHolder."), "\(report)")
    }

    @Test("a factory run that failed holds nothing: what it resolved before failing names no holder")
    func failedRunNamesNoHolder() throws {
        let toggle = CondSwitch()
        let (container, lines) = containerWithConditionalHolder(toggle)
        (toggle.usesService, toggle.fails) = (true, true)
        #expect(throws: InjectionError.self) { try container.resolve(CondHolder.self) }
        (toggle.usesService, toggle.fails) = (false, false)
        #expect(try container.resolve(CondHolder.self).service == nil)
        container.register(CondService.self) { CondService() }
        #expect(lines.all == [], "the cached holder never used CondService: \(lines.all)")
    }

    @Test("a holder is named for what the build of its cached instance resolved, not what an earlier build did")
    func conditionalDependencyFollowsTheCachedInstance() throws {
        let toggle = CondSwitch()
        let (container, lines) = containerWithConditionalHolder(toggle)
        toggle.usesService = true
        #expect(try container.resolve(CondHolder.self).service != nil)
        container.reset()
        toggle.usesService = false
        #expect(try container.resolve(CondHolder.self).service == nil)
        _ = try container.resolve(CondService.self)  // Cached: registering again replaces an instance.
        container.register(CondService.self) { CondService() }
        #expect(lines.all == [], "the cached holder was built without CondService: \(lines.all)")

        // And the other way round: built without it first, then, after a reset, with it.
        let (other, otherLines) = containerWithConditionalHolder(toggle)
        toggle.usesService = false
        #expect(try other.resolve(CondHolder.self).service == nil)
        other.reset()
        toggle.usesService = true
        #expect(try other.resolve(CondHolder.self).service != nil)
        other.register(CondService.self) { CondService() }
        #expect(otherLines.all.count == 1, "\(otherLines.all)")
        #expect(otherLines.all.first?.contains("still hold the old one: CondHolder.") == true, "\(otherLines.all)")
    }

    @Test("inside resetCurrentContainer { }, or with nothing cached that depends on it, nothing is reported")
    func correctReRegistrationIsSilent() throws {
        try withRecordedDiagnostics { lines in
            let container = try containerWithACachedDependent()
            container.reset {
                container.register(StaleUserSession.self) { StaleUserSession() }
            }
            _ = try container.resolve(StaleUserSession.self)
            container.register(StaleUserSession.self) { StaleUserSession() }   // nothing holds the old one now
            #expect(lines.about("StaleUserSession").isEmpty)
        }
    }

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

    @Test("after removeAll, the same mistake with the new registrations is reported again")
    func reportedAgainAfterRemoveAll() throws {
        try withRecordedDiagnostics { lines in
            let container = try containerWithACachedDependent()
            container.register(StaleUserSession.self) { StaleUserSession() }
            container.removeAll()
            container.register(StaleUserSession.self) { StaleUserSession() }
            container.register(StaleFeedRepository.self) { StaleFeedRepository() }
            _ = try container.resolve(StaleFeedRepository.self)
            container.register(StaleUserSession.self) { StaleUserSession() }
            #expect(lines.about("StaleUserSession").count == 2, "\(lines.all)")
        }
    }

    @Test("re-registering a builder that cached instances built with suggests the builder form of register")
    func builderReportSuggestsBuilderForm() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            container.register(StaleCardBuilder.self) { _ in StaleCard() }
            container.register(StaleDeck.self) { StaleDeck() }
            _ = try container.resolve(StaleDeck.self)
            container.register(StaleCardBuilder.self) { _ in StaleCard() }
            let report = try #require(lines.about("StaleCardBuilder").first)
            #expect(report.contains("StaleDeck"))
            #expect(report.contains("resetCurrentContainer { register(StaleCardBuilder.self) { builder in ... } }"))
        }
    }

    @Test("a stale handle's postConstruction and implements leave the newer registration alone, and are reported")
    func staleHandleIsReported() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            let stale = container.register(HandleVersion.self) { HandleVersion(1) }
            container.register(HandleVersion.self) { HandleVersion(2) }
            stale.postConstruction { _ in }
            stale.implements((any HandleVersioned).self) { $0 }
            let version = try container.resolve(HandleVersion.self).version
            #expect(version == 2, "the stale handle registered its old factory again")
            #expect(!container.isRegistered((any HandleVersioned).self))
            let reports = lines.about("stale handle of HandleVersion")
            #expect(reports.count == 2, "\(lines.all)")
            let report = try #require(reports.first)
            #expect(report.hasPrefix("Injection: .postConstruction { } on a stale handle of HandleVersion did nothing"))
            #expect(report.contains("Chain it on the latest register call: register(HandleVersion.self) { ... }"))
        }
    }

    @Test("inside resetCurrentContainer { }, a handle made stale in the block acts on nothing and is reported")
    func staleHandleInResetBlockIsReported() throws {
        try withRecordedDiagnostics { lines in
            let container = InjectionContainer()
            let stale = container.register(HandleVersion.self) { HandleVersion(1) }
            container.reset {
                container.register(HandleVersion.self) { HandleVersion(2) }
                stale.postConstruction { _ in }
            }
            let version = try container.resolve(HandleVersion.self).version
            #expect(version == 2, "the stale handle registered its old factory again")
            #expect(lines.about("stale handle of HandleVersion").count == 1, "\(lines.all)")
        }
    }
}
