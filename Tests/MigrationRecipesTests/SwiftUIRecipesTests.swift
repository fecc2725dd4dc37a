import Injection
import InjectionTesting
import Testing

// Docs/SwiftUI.md: the logic its SwiftUI snippets use, compiled and tested on Linux (SwiftUI itself is not
// available here, so the views are not).

protocol ProfileAPI: Sendable {
    func userName() -> String
}

struct FakeProfileAPI: ProfileAPI {
    let name: String
    func userName() -> String { name }
}

@MainActor
final class ProfileModel {
    private let api: any ProfileAPI
    init(api: any ProfileAPI = Inject()) { self.api = api }
    var title: String { "Hello, \(api.userName())" }
}

func previewContainer() -> InjectionContainer {
    let container = InjectionContainer()
    container.register((any ProfileAPI).self) { FakeProfileAPI(name: "Preview") }
    container.register(ProfileModel.self, isolation: MainActor.shared) { ProfileModel() }
    return container
}

final class PreviewSession: Sendable {
    let userName: String
    init(userName: String) { self.userName = userName }
}

@Suite("Recipes: SwiftUI")
struct SwiftUIRecipesTests {
    @MainActor
    @Test("a preview's container gives the view its fakes, and nothing of the app's")
    func previewContainerGivesFakes() {
        let model = InjectionManager.withContainer(previewContainer()) { () -> ProfileModel in Inject() }
        #expect(model.title == "Hello, Preview")
        #expect(!InjectionManager.sharedContainer.isRegistered((any ProfileAPI).self))
    }

    @MainActor
    @Test("a .scoped model injected on every init of a view struct is one model; a .transient one is not")
    func scopedModelSurvivesReinit() {
        let container = previewContainer()
        let first = InjectionManager.withContainer(container) { () -> ProfileModel in Inject() }
        let second = InjectionManager.withContainer(container) { () -> ProfileModel in Inject() }
        #expect(first === second)
        container.register(ProfileModel.self, lifetime: .transient, isolation: MainActor.shared) { ProfileModel() }
        let third = InjectionManager.withContainer(container) { () -> ProfileModel in Inject() }
        let fourth = InjectionManager.withContainer(container) { () -> ProfileModel in Inject() }
        #expect(third !== fourth)
    }

    @Test("a view's provider follows the session across login and logout")
    func providerFollowsSession() {
        let container = InjectionContainer()
        container.register(PreviewSession.self) { PreviewSession(userName: "alice") }
        let session = InjectionManager.withContainer(container) { InjectProvider(PreviewSession.self) }
        #expect(session.value.userName == "alice")
        container.reset {
            container.register(PreviewSession.self) { PreviewSession(userName: "bob") }
        }
        #expect(session.value.userName == "bob")
    }
}
