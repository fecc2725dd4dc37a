import Injection
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
