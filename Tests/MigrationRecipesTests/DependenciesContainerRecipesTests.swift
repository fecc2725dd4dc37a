import Injection
import InjectionTesting
import Testing

// Docs/Migrating.md, "From a keyed DependenciesContainer": the After side, compiled and tested.

// MARK: - String keys become types and typed keys

protocol SettingsStore: AnyObject, Sendable {
    var suite: String { get }
}

final class DefaultsStore: SettingsStore {
    let suite: String
    init(suite: String) { self.suite = suite }
}

enum AppSettings: InjectionKey { typealias Value = any SettingsStore }
enum SharedSettings: InjectionKey { typealias Value = any SettingsStore }

func registerSettings() {
    InjectionManager.register((any WebAPI).self, lifetime: .singleton) { LiveWebAPI() }   // "api": one per type, no key
    InjectionManager.register(AppSettings.self, lifetime: .singleton) { DefaultsStore(suite: "standard") }
    InjectionManager.register(SharedSettings.self, lifetime: .singleton) { DefaultsStore(suite: "group.shared") }
}

final class SettingsScreen {
    let api: any WebAPI = Inject()
    let settings = Inject(AppSettings.self)
    let sharedSettings = Inject(SharedSettings.self)
}

// MARK: - Registering an instance that already exists

func registerExisting(settings store: DefaultsStore) {
    InjectionManager.register(AppSettings.self, lifetime: .singleton) { store }
}

// MARK: - Tests

@Suite("DependenciesContainer recipes", .isolatedInjection)
struct DependenciesContainerRecipesTests {
    @Test("string keys become typed keys: two instances of one type, checked by the compiler")
    func typedKeys() throws {
        registerSettings()
        try InjectionManager.verify()
        let screen = SettingsScreen()
        #expect(screen.settings.suite == "standard")
        #expect(screen.sharedSettings.suite == "group.shared")
        #expect(screen.settings !== screen.sharedSettings)
        #expect(SettingsScreen().settings === screen.settings)
    }

    @Test("a missing key is an error naming it, not a nil from a dictionary lookup")
    func missingKey() {
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(SharedSettings.self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.typeName.hasSuffix("SharedSettings") == true)
    }

    @Test("an existing instance is registered by capturing it in a singleton factory")
    func existingInstance() {
        let store = DefaultsStore(suite: "restored")
        registerExisting(settings: store)
        #expect(Inject(AppSettings.self) === store)
        InjectionManager.resetCurrentContainer()
        #expect(Inject(AppSettings.self) === store)
    }
}
