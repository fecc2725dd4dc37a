import Injection
import InjectionTesting
import Testing

/// The only suite that touches the process-wide container. It uses types no other test registers,
/// and cleans up after itself.
private protocol Analytics: AnyObject, Sendable {}
private final class LiveAnalytics: Analytics {}

@Suite("The process-wide container", .serialized)
struct SharedContainerTests {
    @Test("InjectionManager acts on the shared container outside any binding")
    func managerActsOnSharedContainer() throws {
        defer { InjectionManager.unregister((any Analytics).self) }
        #expect(InjectionManager.currentContainer === InjectionManager.sharedContainer)
        InjectionManager.register((any Analytics).self) { LiveAnalytics() }
        #expect(InjectionManager.sharedContainer.isRegistered((any Analytics).self))
        let analytics: any Analytics = Inject()
        #expect(try InjectionManager.sharedContainer.resolve((any Analytics).self) === analytics)
    }

    @Test("a reset of the shared container gives a new scoped instance")
    func resetSharedContainer() throws {
        defer { InjectionManager.unregister((any Analytics).self) }
        InjectionManager.register((any Analytics).self) { LiveAnalytics() }
        let first: any Analytics = Inject()
        InjectionManager.resetCurrentContainer()
        let second: any Analytics = Inject()
        #expect(first !== second)
    }
}

private final class LaunchService: Sendable {}
private final class TestOnlyService: Sendable {}

extension SharedContainerTests {
    @Test(".isolatedInjection copies the launch registrations and leaks nothing back")
    func isolatedTraitSeesLaunchRegistrations() async throws {
        InjectionManager.register(LaunchService.self) { LaunchService() }
        defer { InjectionManager.unregister(LaunchService.self) }
        let launchInstance = Inject(LaunchService.self)
        try await IsolatedInjectionTrait().provideScope(for: Test.current!, testCase: nil) {
            #expect(InjectionManager.isRegistered(LaunchService.self))
            #expect(Inject(LaunchService.self) !== launchInstance)  // Instances are not copied.
            InjectionManager.register(TestOnlyService.self) { TestOnlyService() }
            InjectionManager.resetCurrentContainer()
        }
        #expect(!InjectionManager.isRegistered(TestOnlyService.self))
        #expect(Inject(LaunchService.self) === launchInstance)
    }
}
