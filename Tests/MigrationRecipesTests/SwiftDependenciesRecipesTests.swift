import Injection
import InjectionTesting
import Testing

// Docs/Migrating.md, "From swift-dependencies": the After side of each recipe, compiled and tested.

// MARK: - DependencyKey, liveValue and @Dependency

struct APIClient: Sendable {
    var fetchUser: @Sendable (Int) -> String
}

extension APIClient {
    static let live = APIClient(fetchUser: { id in "user \(id)" })
    static let mock = APIClient(fetchUser: { _ in "mock user" })
}

func registerAPIClient() {
    InjectionManager.register(APIClient.self, lifetime: .singleton) { .live }
}

final class UserModel {
    let apiClient: APIClient
    init(apiClient: APIClient = Inject()) { self.apiClient = apiClient }
    func title(for id: Int) -> String { apiClient.fetchUser(id) }
}

// MARK: - withDependencies

/// `withDependencies { $0.apiClient = .mock } operation: { UserModel() }`
func makeUserModelWithMock() -> UserModel {
    let container = InjectionContainer(copying: InjectionManager.currentContainer)
    container.register(APIClient.self) { .mock }
    return InjectionManager.withContainer(container) {
        UserModel()
    }
}

// MARK: - testValue: register the test double in the test

@Suite(.isolatedInjection)
struct UserModelTests {
    @Test func showsTheUser() {
        InjectionManager.register(APIClient.self) { .mock }
        #expect(UserModel().title(for: 1) == "mock user")
    }
}

// MARK: - Tests

@Suite("swift-dependencies recipes", .isolatedInjection)
struct SwiftDependenciesRecipesTests {
    @Test("liveValue becomes the launch registration; @Dependency becomes Inject() at the default argument")
    func liveValue() {
        registerAPIClient()
        #expect(UserModel().title(for: 7) == "user 7")
    }

    @Test("a test can pass the value to the constructor and needs no container")
    func constructorArgument() {
        let model = InjectionManager.withContainer(InjectionContainer()) { UserModel(apiClient: .mock) }
        #expect(model.title(for: 1) == "mock user")
    }

    @Test("withDependencies becomes withContainer on a copy: the override holds inside the closure only")
    func withDependencies() {
        registerAPIClient()
        let mocked = makeUserModelWithMock()
        #expect(mocked.title(for: 1) == "mock user")     // keeps its override after the closure returned
        #expect(UserModel().title(for: 1) == "user 1")   // outside the closure: the live value
    }

    @Test("there is no test value by default: an unregistered dependency is an error, not a fallback")
    func noTestValueByDefault() {
        #expect(!InjectionManager.isRegistered(APIClient.self))
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(APIClient.self) }
        #expect(error?.kind == .notRegistered)
    }
}
