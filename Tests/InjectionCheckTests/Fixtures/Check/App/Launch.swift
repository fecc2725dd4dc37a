import Injection
import Services

func registerServices() {
    InjectionManager.register((any API).self) { LiveAPI() }
    InjectionManager.register(Store.self) { LiveStore() }
    // injection-check: registers Tracker
}

@MainActor final class Screen {
    let analytics = Inject(Analytics.self)
    let tracker: Tracker = Inject()
    let lazyKeychain = InjectLazy<any Services.Keychain>()
    let flags: FeatureFlags = Inject()  // injection-check: ignore
    func refresh() async throws {
        try await InjectionManager.prepare(Analytics.self)
        let clock = try InjectionManager.resolve((Clock).self)
    }
}
