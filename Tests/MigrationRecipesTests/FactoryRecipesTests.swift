import Injection
import InjectionTesting
import Testing

// Docs/Migrating.md, "From Factory": the After side of each recipe, compiled and tested.

// MARK: - Container.shared and Factory definitions

final class FeedService: Sendable {
    let api: any WebAPI
    init(api: any WebAPI = Inject()) { self.api = api }
}

func registerFeed() {
    InjectionManager.register((any WebAPI).self, lifetime: .singleton) { LiveWebAPI() }
    InjectionManager.register(FeedService.self) { FeedService() }
}

// MARK: - Scopes

final class SearchRequest: Sendable {}     // .unique, Factory's default
final class SearchHistory: Sendable {}     // .cached
final class CurrentUser: Sendable {}       // .scope(.session)
final class ThumbnailStore: Sendable {}    // .shared
final class Uploader: Sendable {}          // .singleton

func registerSearch() {
    InjectionManager.register(SearchRequest.self, lifetime: .transient) { SearchRequest() }
    InjectionManager.register(SearchHistory.self) { SearchHistory() }
    InjectionManager.register(CurrentUser.self) { CurrentUser() }
    InjectionManager.register(ThumbnailStore.self, lifetime: .weak) { ThumbnailStore() }
    InjectionManager.register(Uploader.self, lifetime: .singleton) { Uploader() }
}

/// `Container.shared.manager.reset(options: .scope)` and `.reset(scope: .session)`.
func endSearchSession() {
    InjectionManager.resetCurrentContainer()
}

// MARK: - @Injected and @LazyInjected

final class FeedViewModel {
    let api: any WebAPI = Inject()                  // @Injected(\.api) var api
    let feed = InjectLazy(FeedService.self)      // @LazyInjected(\.feedService) var feed
}

// MARK: - Container.shared.manager.reset()

/// Back to the launch registrations, as one step: overrides are replaced and their instances evicted.
func resetFeedToLaunchRegistrations() {
    InjectionManager.resetCurrentContainer {
        registerFeed()
    }
}

// MARK: - FactoryTesting's .container trait

@Suite(.isolatedInjection)
struct FeedTests {
    init() {
        registerFeed()      // this test's container: the launch registrations, then the test's overrides
    }

    @Test func usesTheMock() {
        InjectionManager.register((any WebAPI).self) { MockWebAPI() }
        #expect(Inject(FeedService.self).api is MockWebAPI)
    }

    @Test func usesTheLiveAPIByDefault() {
        #expect(Inject(FeedService.self).api is LiveWebAPI)
    }
}

// MARK: - Tests

@Suite("Factory recipes", .isolatedInjection)
struct FactoryRecipesTests {
    @Test("a Factory definition becomes a registration at launch, resolved with Inject()")
    func definitions() throws {
        registerFeed()
        let feed = Inject(FeedService.self)
        #expect(feed.api.get("/feed") == "200 OK /feed")
        #expect(Inject(FeedService.self) === feed)
        try InjectionManager.verify()
    }

    @Test("unique, cached, session, shared and singleton map to lifetimes; one reset ends the session")
    func scopes() {
        registerSearch()
        #expect(Inject(SearchRequest.self) !== Inject(SearchRequest.self))
        let history = Inject(SearchHistory.self), user = Inject(CurrentUser.self), uploader = Inject(Uploader.self)
        #expect(Inject(SearchHistory.self) === history)

        endSearchSession()
        #expect(Inject(SearchHistory.self) !== history)
        #expect(Inject(CurrentUser.self) !== user)
        #expect(Inject(Uploader.self) === uploader)

        var store: ThumbnailStore? = Inject(ThumbnailStore.self)
        #expect(Inject(ThumbnailStore.self) === store)
        weak let released = store
        store = nil
        #expect(released == nil)
    }

    @Test("Inject() replaces @Injected; InjectLazy resolves on first use like @LazyInjected")
    func propertyWrappers() {
        InjectionManager.register((any WebAPI).self) { LiveWebAPI() }
        let viewModel = FeedViewModel()                          // FeedService is not registered yet
        InjectionManager.register(FeedService.self) { FeedService() }
        #expect(viewModel.feed.value.api is LiveWebAPI)             // resolved here
        #expect(viewModel.feed.value === Inject(FeedService.self))
    }

    @Test("re-running the launch registrations in a reset block undoes overrides and clears caches")
    func managerReset() {
        registerFeed()
        InjectionManager.register((any WebAPI).self) { MockWebAPI() }
        let overridden = Inject(FeedService.self)
        #expect(overridden.api is MockWebAPI)

        resetFeedToLaunchRegistrations()
        let restored = Inject(FeedService.self)
        #expect(restored !== overridden)
        #expect(restored.api is LiveWebAPI)
    }
}
