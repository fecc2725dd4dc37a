import Injection
import Testing

// Docs/GettingStarted.md says its samples, pasted in order into an executable's `main.swift`, build. This file holds
// them, in order, as the test target compiles them: the region below is the guide's samples, character for
// character (without the `import Injection` that opens them, at the top of this file), and a test checks that it
// still is. Each sample declares or defines; none runs code at the top level, so they compile here as in a
// `main.swift`. They sit in a namespace of their own: the test target declares an `API` and a `LiveAPI` too.

/// The guide's samples. A struct, so that a test can call the functions they define.
struct GettingStartedSamples {
    // BEGIN GettingStarted.md
    protocol API: Sendable {
        func get(_ path: String) -> String
    }

    final class LiveAPI: API {
        func get(_ path: String) -> String { "200 OK \(path)" }
    }

    protocol Logger: Sendable {
        func log(_ message: String)
    }

    struct PrintLogger: Logger {
        func log(_ message: String) { print(message) }
    }

    func registerServices() {
        InjectionManager.register((any API).self) { LiveAPI() }
        InjectionManager.register((any Logger).self, lifetime: .singleton) { PrintLogger() }
    }

    final class SettingsViewModel {
        let api: any API = Inject()                // the type comes from the annotation
        let logger = Inject((any Logger).self)     // the type is given explicitly
    }

    final class ProfileViewModel {
        private let api: any API
        private let logger: any Logger

        init(api: any API = Inject(), logger: any Logger = Inject()) {
            self.api = api
            self.logger = logger
        }

        func title() -> String {
            logger.log("loading profile")
            return api.get("/me")
        }
    }

    struct StubAPI: API {
        func get(_ path: String) -> String { "stub \(path)" }
    }

    func checkProfileTitle() {
        let viewModel = ProfileViewModel(api: StubAPI(), logger: PrintLogger())
        assert(viewModel.title() == "stub /me")
    }

    protocol ProfileService: Sendable {
        func headline() -> String
    }

    final class LiveProfileService: ProfileService {
        private let api: any API
        private let logger: any Logger

        init(api: any API = Inject(), logger: any Logger = Inject()) {
            self.api = api
            self.logger = logger
        }

        func headline() -> String {
            logger.log("loading headline")
            return api.get("/me/headline")
        }
    }

    func registerProfileService() {
        InjectionManager.register((any ProfileService).self) { LiveProfileService() }
        // The same, spelled out:
        // InjectionManager.register((any ProfileService).self) { LiveProfileService(api: Inject(), logger: Inject()) }
    }

    final class Detail {
        let id: String
        init(id: String) { self.id = id }
    }

    final class ListViewModel {
        private let makeDetail: (String) -> Detail

        init(makeDetail: @escaping (String) -> Detail = Inject()) {
            self.makeDetail = makeDetail
        }

        func open(id: String) -> Detail { makeDetail(id) }
    }

    func registerMakers() {
        InjectionManager.register(((String) -> Detail).self) { { Detail(id: $0) } }
    }

    final class Comment {
        let id: String
        let api: any API
        init(id: String, api: any API) {
            self.id = id
            self.api = api
        }
    }

    func registerCommentMaker() {
        InjectionManager.register(((String) -> Comment).self) {
            let api: any API = Inject()
            return { Comment(id: $0, api: api) }
        }
    }

    func printProfile() {
        do {
            let api = try InjectionManager.resolve((any API).self)
            print(api.get("/me"))
        } catch {
            print(error.kind, error.typeName, error.chain)
            print(error)
        }
    }

    protocol Store: Sendable {}

    struct StoreUnavailable: Error {}

    final class DiskStore: Store {
        init(path: String) throws {
            guard !path.isEmpty else { throw StoreUnavailable() }
        }
    }

    func registerStore() {
        InjectionManager.register((any Store).self) { try DiskStore(path: "app.db") }
    }

    func registerProfileServiceThrowing() {
        InjectionManager.register((any ProfileService).self) {
            try LiveProfileService(api: InjectionManager.resolve(), logger: InjectionManager.resolve())
        }
    }

    final class UserSession: Sendable {
        let user: String
        init(user: String) { self.user = user }
    }

    func logIn(as user: String) {
        InjectionManager.resetCurrentContainer {
            InjectionManager.register(UserSession.self) { UserSession(user: user) }
        }
    }

    func verifyAtLaunch() {
        #if DEBUG
        do {
            try InjectionManager.verify(registeredLater: [UserSession.self])   // registered at login, by logIn(as:)
        } catch {
            fatalError("\(error)")   // the message lists every problem
        }
        #endif
    }

    func registerDefaultLogger() {
        if !InjectionManager.isRegistered((any Logger).self) {
            InjectionManager.register((any Logger).self, lifetime: .singleton) { PrintLogger() }
        }
    }

    func removeAPI() {
        InjectionManager.unregister((any API).self)
        assert(!InjectionManager.isRegistered((any API).self))
    }

    protocol Auth: Sendable {
        var isLoggedIn: Bool { get }
    }

    protocol TokenStore: Sendable {
        var token: String? { get }
    }

    final class LiveSession: Auth, TokenStore {
        let token: String? = "secret"
        var isLoggedIn: Bool { token != nil }
    }

    func registerSession() {
        InjectionManager.register(LiveSession.self) { LiveSession() }
            .implements((any Auth).self) { $0 }
            .implements((any TokenStore).self) { $0 }
    }

    final class ViewController {}

    final class DataProvider {
        weak var delegate: ViewController?
        func reload() {}
    }

    func registerDataProvider() {
        InjectionManager.register(ViewController.self) { ViewController() }
        InjectionManager.register(DataProvider.self) { DataProvider() }
            .postConstruction { $0.delegate = Inject(ViewController.self) }
            .postConstruction { $0.reload() }
    }

    final class Config {   // not Sendable: settings the app reads once, at launch
        var apiHost: String
        init(apiHost: String) { self.apiHost = apiHost }
    }

    func registerConfig() {
        let config = Config(apiHost: "api.example.com")
        InjectionManager.register(Config.self, instance: config)
    }

    struct CurrentUser: Sendable {
        let name: String
    }

    enum Keychain {
        static func storedUser() -> CurrentUser? { nil }   // the user saved at login, if any
    }

    func registerCurrentUser() {
        InjectionManager.register(CurrentUser?.self) { Keychain.storedUser() }   // nil until login, then cached
    }
    // END GettingStarted.md
}

@Suite("GettingStarted.md's samples")
struct GettingStartedSamplesTests {
    /// The guide's samples as it says to paste them: in order, each after a blank line.
    private static func samples() throws -> String {
        try Guides.blocks("swift", of: "GettingStarted.md").joined(separator: "\n")
    }

    @Test("the guide's samples, pasted in order, are the code this file compiles")
    func samplesCompile() throws {
        let samples = try Self.samples()
        let opening = "import Injection\n\n"
        #expect(samples.hasPrefix(opening))
        let compiled = try Guides.region("GettingStarted.md", of: #filePath)
        #expect(compiled[...] == samples.dropFirst(opening.count),
                "GettingStarted.md's samples changed: copy them into the region of \(#fileID)")
    }

    @Test("the lines the guide quotes from its main.swift are where the samples put them")
    func quotedLinesAreTheSamples() throws {
        let lines = try Self.samples().split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let guide = try Guides.text("GettingStarted.md")
        // "line 61 is LiveProfileService's init": the second honest constructor of the samples.
        #expect(guide.contains("line 61 is `LiveProfileService`'s `init`"))
        #expect(lines[60].drop { $0 == " " } == "init(api: any API = Inject(), logger: any Logger = Inject()) {")
        #expect(lines[56...60].contains { $0.contains("final class LiveProfileService") })
        // "added `let api: any API = Inject()` at line N": the line after the samples.
        #expect(guide.contains("added\n`let api: any API = Inject()` at line \(lines.count + 1)") ||
                guide.contains("added `let api: any API = Inject()` at line \(lines.count + 1)"), "\(lines.count + 1)")
    }

    @Test("the samples run: their registrations resolve, and verify, with the session registered later")
    func samplesRun() throws {
        let samples = GettingStartedSamples()
        try InjectionManager.withContainer(InjectionContainer()) { () throws in
            samples.registerServices()
            samples.registerProfileService()
            samples.registerSession()
            samples.registerDataProvider()
            samples.registerConfig()
            samples.registerCurrentUser()
            #expect(Inject((any GettingStartedSamples.ProfileService).self) is GettingStartedSamples.LiveProfileService)
            #expect(Inject((any GettingStartedSamples.Auth).self).isLoggedIn)
            #expect(Inject(GettingStartedSamples.DataProvider.self).delegate === Inject(GettingStartedSamples.ViewController.self))
            #expect(Inject(GettingStartedSamples.CurrentUser?.self) == nil)
            try InjectionManager.verify(registeredLater: [GettingStartedSamples.UserSession.self])
            samples.logIn(as: "alice")
            #expect(Inject(GettingStartedSamples.UserSession.self).user == "alice")
        }
    }
}
