import Foundation
import Injection
import InjectionTesting
import Testing

// Docs/Diagnostics.md says every message it shows was captured from a real run of the code shown. This suite holds
// it to that: it runs the code of each ```text block the page has, and every block must be a message the library
// gives now, character for character, and every message run here must be on the page. Where a block holds more
// than the library's message, only that part is the library's: the file and line of a trap (`Demo/Services.swift:21`
// is the page's own run), a Swift Testing line around a thrown error, and the sizes of `tooDeep` (a stack's size,
// and how deep it fits, differ with the build and the machine). The page's types are an app's; these are private,
// so a missing one's message ends with a hint that it is private, which the comparison leaves out.

// MARK: - The page's services (API, LiveAPI, Clock, SystemClock and ViewModel come from Support/Fixtures.swift)

private struct Offline: Error, CustomStringConvertible {
    let reason: String
    var description: String { "Offline(reason: \"\(reason)\")" }
}
private struct NotReady: Error {}
private final class Store: Sendable {
    let api: any API
    init(api: any API) { self.api = api }
}
private final class Feed: Sendable {
    let store: Store
    init(store: Store) { self.store = store }
}
private final class Auth: Sendable { init(tokens: Tokens) {} }
private final class Tokens: Sendable { init(auth: Auth) {} }
private final class FeedService: Sendable {
    init() throws { throw Offline(reason: "no route to host") }
}
private protocol Database: Sendable {}
private final class SQLiteDatabase: Database {
    static func open() async -> SQLiteDatabase { SQLiteDatabase() }
}
private enum PrimaryDatabase: InjectionKey { typealias Value = any Database }
private enum CacheDatabase: InjectionKey { typealias Value = any Database }
private enum Payments { final class Ledger: Sendable {} }
private enum Accounting { final class Ledger: Sendable {} }
private protocol ProfileScreen: AnyObject {}
private struct ProfileScreenBuilder: Builder {
    typealias BuildResult = any ProfileScreen
    let userID: String
}
@MainActor private final class ProfileViewModel {}
private struct Settings {}
private final class UserSession: Sendable {}
private final class FeedRepository: Sendable {
    init(session: UserSession) {}
}
private final class ProfileCache: Sendable {
    init(session: UserSession) {}
}
private final class Analytics: Sendable {
    init(session: UserSession) {}
}
private protocol ProfileService: Sendable {}
private final class LiveProfileService: ProfileService {
    init(session: UserSession) {}
}
private final class APIClient: Sendable {}
private final class Tracker: Sendable {
    init(api: APIClient) {}
}
private final class DataProvider: Sendable {}

/// One message as the page shows it: `text` is what the block must be, after `normalize` (if any) is applied to
/// both, for the parts of a block that are not the library's.
private struct Quote {
    let text: String
    var normalize: (@Sendable (String) -> String)?

    func matches(_ block: String) -> Bool {
        guard let normalize else { return block == text }
        return normalize(block) == normalize(text)
    }
}

/// A block's text: the message and a newline.
private func block(_ message: String) -> Quote { Quote(text: message + "\n") }

/// The message of `error`, without the hints that a type is private (the page's types are an app's).
private func message(_ error: InjectionError?) -> String {
    replacing(error?.description ?? "no error",
              [(#" \([^()]* is private, so that line compiles only in the file that declares it\.\)"#, "")])
}

/// What `body` threw: the library throws only `InjectionError`.
private func thrown(_ body: () throws -> Void) -> InjectionError? {
    do {
        try body()
        return nil
    } catch { return error as? InjectionError }
}

/// Replaces each match of each pattern with its template.
private func replacing(_ text: String, _ patterns: [(String, String)]) -> String {
    patterns.reduce(text) { text, pattern in
        let regex = try! NSRegularExpression(pattern: pattern.0)
        return regex.stringByReplacingMatches(
            in: text, range: NSRange(text.startIndex..., in: text), withTemplate: pattern.1)
    }
}

/// The page's broken graph of the `verify()` example: `registerLiveServices()` minus `API`, the `Auth`/`Tokens`
/// cycle with `Inject()`, and `FeedService`.
private func brokenGraph() -> InjectionContainer {
    let container = InjectionContainer()
    InjectionManager.withContainer(container) {
        InjectionManager.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        InjectionManager.register(Store.self) { try Store(api: InjectionManager.resolve()) }
        InjectionManager.register(ViewModel.self, lifetime: .transient) { ViewModel() }
        InjectionManager.register(Auth.self) { Auth(tokens: Inject()) }
        InjectionManager.register(Tokens.self) { Tokens(auth: Inject()) }
        InjectionManager.register(FeedService.self) { try FeedService() }
    }
    return container
}

/// Every message the page quotes, from a real run of the code the page shows with it.
private func realQuotes() async throws -> [Quote] {
    var quotes: [Quote] = []

    // What every message contains: a module-qualified name. (Nested here, in one module: the same words.)
    let ledgers = InjectionContainer()
    ledgers.register(Payments.Ledger.self) { Payments.Ledger() }
    quotes.append(block(message(thrown { _ = try ledgers.resolve(Accounting.Ledger.self) })))

    // notRegistered: at the top level, deeper in the graph, under keys, removed, an optional by mistake.
    quotes.append(block(message(thrown { _ = try InjectionContainer().resolve((any API).self) })))
    let noAPI = InjectionContainer()
    noAPI.register(Store.self) { try Store(api: InjectionManager.resolve()) }
    quotes.append(block(message(thrown { _ = try noAPI.resolve(Store.self) })))
    let keyed = InjectionContainer()
    keyed.register(PrimaryDatabase.self) { SQLiteDatabase() }
    keyed.register(CacheDatabase.self) { SQLiteDatabase() }
    quotes.append(block(message(thrown { _ = try keyed.resolve((any Database).self) })))
    let removed = InjectionContainer()
    removed.register((any API).self, file: "App/Services.swift") { LiveAPI() }
    removed.register(Store.self) { try Store(api: InjectionManager.resolve()) }
    removed.unregister((any API).self)
    quotes.append(block(message(thrown { _ = try removed.resolve(Store.self) })))
    quotes.append(block(message(thrown { _ = try InjectionContainer().resolve((any API)?.self) })))

    // cycle.
    let cycle = InjectionContainer()
    cycle.register(Auth.self) { try Auth(tokens: InjectionManager.resolve()) }
    cycle.register(Tokens.self) { try Tokens(auth: InjectionManager.resolve()) }
    quotes.append(block(message(thrown { _ = try cycle.resolve(Auth.self) })))

    // factoryFailed: a factory, a postConstruction, a build closure.
    let offline = InjectionContainer()
    offline.register((any API).self) { throw Offline(reason: "no route to host") }
    offline.register(Store.self) { try Store(api: InjectionManager.resolve()) }
    quotes.append(block(message(thrown { _ = try offline.resolve(Store.self) })))
    let notReady = InjectionContainer()
    notReady.register((any API).self) { LiveAPI() }
    notReady.register(Feed.self) { try Feed(store: InjectionManager.resolve()) }
    notReady.register(Store.self) { try Store(api: InjectionManager.resolve()) } postConstruction: { _ in throw NotReady() }
    quotes.append(block(message(thrown { _ = try notReady.resolve(Feed.self) })))
    let builder = InjectionContainer()
    builder.register(ProfileScreenBuilder.self) { _ in throw Offline(reason: "no route to host") }
    quotes.append(block(message(thrown { _ = try builder.build(ProfileScreenBuilder(userID: "42")) })))

    // resolvedDuringReset.
    let resetting = InjectionContainer()
    resetting.register(Store.self) { Store(api: LiveAPI()) }
    var duringReset: InjectionError?
    resetting.reset { duringReset = thrown { _ = try resetting.resolve(Store.self) } }
    quotes.append(block(message(duringReset)))

    // wrongIsolation, off the main actor.
    let mainActor = InjectionContainer()
    mainActor.register(ProfileViewModel.self, isolation: MainActor.shared) { ProfileViewModel() }
    let wrongIsolation = await onOwnThread { message(thrown { _ = try mainActor.resolve(ProfileViewModel.self) }) }
    quotes.append(block(wrongIsolation))

    // asyncFactory.
    let asyncFactory = InjectionContainer()
    asyncFactory.registerAsync((any Database).self) { await SQLiteDatabase.open() }
    quotes.append(block(message(thrown { _ = try asyncFactory.resolve((any Database).self) })))

    // weakNeedsClass.
    let weak = InjectionContainer()
    weak.register(Settings.self, lifetime: .weak) { Settings() }
    quotes.append(block(message(thrown { _ = try weak.resolve(Settings.self) })))

    // containerReleased.
    var released: InjectionContainer? = InjectionContainer()
    released!.register(FeedService.self) { try FeedService() }
    let lazy = InjectionManager.withContainer(released!) { InjectLazy(FeedService.self) }
    released = nil
    quotes.append(block(message(thrown { _ = try lazy.resolve() })))

    // tooDeep, on an 8 MiB stack: the wording; the names of the ends and the sizes are the run's.
    let deep = InjectionContainer()
    deep.register(ChainBase.self) { 0 }
    var registrar = ChainRegistrar(container: deep, levels: 5_000, lifetime: .scoped)
    registrar.visitNumbers(digits: 13, NoDigits.self)
    let top = registrar.resolveTop
    let tooDeep = onSizedStack { () -> String in
        do {
            _ = try InjectionManager.withContainer(deep) { try top() }
            return "resolved"
        } catch { return message(error as? InjectionError) }
    }
    quotes.append(Quote(text: tooDeep + "\n") { text in
        replacing(text, [(#"resolving \S+ nests"#, "resolving T nests"), (#"\(\S+ → … → \S+\)"#, "(T → … → T)"),
                         (#"[0-9]+"#, "N")])
    })

    // Trap or throw: the trap's message, captured from a process that traps (its file and line are its own).
    quotes.append(Quote(text: "Demo/Services.swift:21: Fatal error: " + (try await trappedMessage()) + "\n") { text in
        replacing(text, [(#"^.*: Fatal error: "#, "FILE:LINE: Fatal error: ")])
    })

    // Cycle detection across threads: each thread's error, printed as the page's run printed it.
    let crossed = thrown { _ = try cycle.resolve(Tokens.self) }
    let printed = (1...2).map { thread in
        "thread \(thread): kind: \(crossed?.kind.description ?? "") typeName: \(crossed?.typeName ?? "") "
            + "chain: \(crossed?.chain ?? [])\n\(message(crossed))\n"
    }
    quotes.append(Quote(text: printed.joined()))

    // verify() of the broken graph, then its graph as text and DOT.
    let broken = brokenGraph()
    quotes.append(block(message(thrown { try broken.verify() })))
    let graph = broken.dependencyGraph()
    quotes.append(block(graph.description))
    quotes.append(Quote(text: graph.dot))

    // diagnosticsHandler: registered again, with a scoped holder; with a singleton holder; with a weak holder.
    quotes.append(block(reRegistrationReport(holder: FeedRepository.self, lifetime: .scoped) {
        try FeedRepository(session: InjectionManager.resolve())
    }))
    let singletons = InjectionContainer()
    let singletonReports = Collector<String>()
    singletons.diagnosticsHandler = { singletonReports.append($0) }
    singletons.register(APIClient.self, lifetime: .singleton) { APIClient() }
    singletons.register(Tracker.self, lifetime: .singleton) { try Tracker(api: InjectionManager.resolve()) }
    _ = try singletons.resolve(Tracker.self)
    singletons.register(APIClient.self, lifetime: .singleton) { APIClient() }
    quotes.append(block(singletonReports.values.joined(separator: "\n")))
    quotes.append(block(reRegistrationReport(holder: ProfileCache.self, lifetime: .weak) {
        try ProfileCache(session: InjectionManager.resolve())
    }))

    // A stale handle.
    let stale = InjectionContainer()
    let staleReports = Collector<String>()
    stale.diagnosticsHandler = { staleReports.append($0) }
    let handle = stale.register(DataProvider.self) { DataProvider() }
    stale.register(DataProvider.self) { DataProvider() }
    handle.postConstruction { _ in }
    quotes.append(block(staleReports.values.joined(separator: "\n")))

    // captiveDependency, as verify() reports it.
    let captive = InjectionContainer()
    captive.register(UserSession.self) { UserSession() }
    captive.register(Analytics.self, lifetime: .singleton) { try Analytics(session: InjectionManager.resolve()) }
    let captiveError = thrown { try captive.verify() }
    quotes.append(block(message(captiveError?.problems.first)))

    // The recipe: a test's verify() of registerLiveServices() minus API (the run's Swift Testing line around it).
    let live = InjectionContainer()
    InjectionManager.withContainer(live) {
        InjectionManager.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        InjectionManager.register(Store.self) { try Store(api: InjectionManager.resolve()) }
        InjectionManager.register(ViewModel.self, lifetime: .transient) { ViewModel() }
    }
    let recipe = message(thrown { try live.verify() })
    quotes.append(Quote(text: "✘ Test \"every live registration resolves, and the graph is written for review\" "
        + "recorded an issue at DependencyGraphTests.swift:7:6: Caught error: " + recipe + "\n") { text in
        replacing(text, [(#"^✘ Test .* recorded an issue at .*: Caught error: "#, "TEST: Caught error: ")])
    })
    return quotes
}

/// What the diagnostics handler of a container reports when `UserSession` is registered again while a cached
/// `holder` of `lifetime` holds the old one.
private func reRegistrationReport<Holder: Sendable>(
    holder: Holder.Type, lifetime: InjectionLifetime, factory: @escaping @Sendable () throws -> Holder
) -> String {
    let container = InjectionContainer()
    let reports = Collector<String>()
    container.diagnosticsHandler = { reports.append($0) }
    container.register(UserSession.self) { UserSession() }
    container.register(Holder.self, lifetime: lifetime, factory: factory)
    let held = InjectionManager.withContainer(container) { try? InjectionManager.resolve(Holder.self) }
    container.register(UserSession.self) { UserSession() }
    return withExtendedLifetime(held) { reports.values.joined(separator: "\n") }
}

/// What the quote of a miss met by code bound to no container says, which the process-wide container's suite checks.
private let unboundMiss = " It was requested from the process-wide container by code bound to no container while a test runs"

/// The error of a resolve of `ProfileService`, whose `UserSession` is missing, from the process-wide container by a
/// thread bound to no container, while a test's container lives. Registers in the process-wide container a type
/// of this file only, and takes it out again.
private func unboundMissAtDepth() -> InjectionError? {
    let shared = InjectionManager.sharedContainer
    shared.register((any ProfileService).self) { try LiveProfileService(session: InjectionManager.resolve()) }
    defer { shared.unregister((any ProfileService).self) }
    let testContainer = InjectionContainer(copying: shared, testName: "\"unbound\"")
    let errors = Collector<InjectionError>()
    // Recorded, not printed: while a strict test of another suite runs, the unbound resolve is reported too.
    withRecordedDiagnostics { _ in
        withExtendedLifetime(testContainer) {
            _ = runOnThreads(1) { _ in
                do throws(InjectionError) {
                    _ = try InjectionManager.resolve((any ProfileService).self)
                } catch { errors.append(error) }
            }
        }
    }
    return errors.values.first
}

/// The message with which `Inject()` stops a process, read from that process's standard error.
private func trappedMessage() async throws -> String {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        let container = InjectionContainer()
        container.register((any Clock).self, lifetime: .singleton) { SystemClock() }
        container.register(ViewModel.self, lifetime: .transient) { ViewModel() }
        InjectionManager.withContainer(container) { _ = Inject(ViewModel.self) }
    }
    let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    let line = try #require(output.split(separator: "\n").first { $0.contains("Fatal error: Injection:") })
    return String(line[line.range(of: "Fatal error: ")!.upperBound...])
}

@Suite("Diagnostics.md's messages are the library's")
struct DiagnosticsPageTests {
    @Test("every message Diagnostics.md quotes is the message a real run of its code gives, and each is quoted")
    func everyQuoteIsARealMessage() async throws {
        // The quote of a miss by code bound to no container is checked in the process-wide container's suite.
        let blocks = try Guides.blocks("text", of: "Diagnostics.md").filter { !$0.contains(unboundMiss) }
        let quotes = try await realQuotes()
        for block in blocks where !quotes.contains(where: { $0.matches(block) }) {
            Issue.record("Diagnostics.md quotes a message no run here gives:\n\(block)")
        }
        for quote in quotes where !blocks.contains(where: { quote.matches($0) }) {
            Issue.record("a message Diagnostics.md does not quote as the library gives it:\n\(quote.text)")
        }
    }
}

extension SharedContainerTests {
    @Test("Diagnostics.md: a miss below the top level, met by code bound to no container while a test's container lives, is quoted as the library gives it")
    func unboundMissAtDepthIsQuoted() throws {
        let quoted = try Guides.blocks("text", of: "Diagnostics.md").filter { $0.contains(unboundMiss) }
        #expect(quoted == [block(message(unboundMissAtDepth())).text], "\(quoted)")
    }
}
