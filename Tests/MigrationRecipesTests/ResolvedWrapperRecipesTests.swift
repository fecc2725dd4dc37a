import Injection
import InjectionTesting
import Testing

// Docs/Migrating.md, "From a @Resolved property wrapper": the interim wrapper and the tests.
// The domain type is in ProfileViewModel.swift, its convenience initializer in ProfileViewModel+Injection.swift.

// MARK: - Step 1 (optional): point the old wrapper at Injection

@propertyWrapper
struct Resolved<Value> {
    let wrappedValue: Value
    init() { wrappedValue = Inject() }
}

final class LegacySettingsViewModel {
    @Resolved var api: any WebAPI      // unchanged until the type gets an honest constructor
}

// MARK: - Tests

@Suite("@Resolved wrapper recipes", .isolatedInjection)
struct ResolvedWrapperRecipesTests {
    @Test("the domain type is built without any container, even one with nothing registered")
    func testableWithoutAContainer() {
        let viewModel = InjectionManager.withContainer(InjectionContainer()) {
            ProfileViewModel(api: MockWebAPI(reply: "stub"), clock: FixedClock(now: 42))
        }
        #expect(viewModel.header() == "stub /me at 42")
    }

    @Test("the convenience initializer in the extension resolves from the container")
    func convenienceInitializer() {
        InjectionManager.register((any WebAPI).self) { MockWebAPI(reply: "registered") }
        InjectionManager.register((any AppClock).self, lifetime: .singleton) { FixedClock(now: 7) }
        #expect(ProfileViewModel().header() == "registered /me at 7")
    }

    @Test("the interim wrapper reads the same container, so old and new code share instances")
    func interimWrapper() {
        InjectionManager.register((any WebAPI).self) { LiveWebAPI() }
        let legacy = LegacySettingsViewModel()
        #expect(legacy.api.get("/settings") == "200 OK /settings")
        #expect((legacy.api as? LiveWebAPI) === (Inject((any WebAPI).self) as? LiveWebAPI))
    }
}
