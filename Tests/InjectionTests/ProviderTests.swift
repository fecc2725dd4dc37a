import Injection
import Testing

// InjectProvider: a handle that resolves again on every read.

private final class ProvidedSession: Sendable {}
private final class ProvidedScreen: Sendable {}
private enum SecondProvidedSession: InjectionKey { typealias Value = ProvidedSession }

/// A long-lived object that reads the session through a provider.
private final class SettingsScreen: Sendable {
    let session = InjectProvider(ProvidedSession.self)
}

@Suite("InjectProvider")
struct ProviderTests {
    @Test("a scoped type gives the current scope's instance on every read, so the holder follows resets")
    func followsResets() throws {
        let container = InjectionContainer()
        container.register(ProvidedSession.self) { ProvidedSession() }
        let screen = InjectionManager.withContainer(container) { SettingsScreen() }
        let first = screen.session.value
        #expect(screen.session.value === first, "one scope, one instance")
        container.reset()
        let second = try screen.session.resolve()
        #expect(second !== first, "after a reset the provider gives the new scope's instance")
        #expect(second === (try container.resolve(ProvidedSession.self)))
    }

    @Test("a transient gives a new instance on every read; a key resolves its own registration")
    func transientAndKey() throws {
        let container = InjectionContainer()
        container.register(ProvidedScreen.self, lifetime: .transient) { ProvidedScreen() }
        container.register(SecondProvidedSession.self) { ProvidedSession() }
        container.register(ProvidedSession.self) { ProvidedSession() }
        let (screens, keyed) = InjectionManager.withContainer(container) {
            (InjectProvider(ProvidedScreen.self), InjectProvider(SecondProvidedSession.self))
        }
        #expect(screens.value !== screens.value)
        #expect(try keyed.resolve() === (try container.resolve(SecondProvidedSession.self)))
        #expect(try keyed.resolve() !== (try container.resolve(ProvidedSession.self)))
    }

    @Test("it resolves from the container current when it was made, whichever container is current at the read")
    func capturesItsContainer() throws {
        let mine = InjectionContainer(), other = InjectionContainer()
        mine.register(ProvidedSession.self) { ProvidedSession() }
        other.register(ProvidedSession.self) { ProvidedSession() }
        let provider = InjectionManager.withContainer(mine) { InjectProvider(ProvidedSession.self) }
        let read = try InjectionManager.withContainer(other) { () throws(InjectionError) -> ProvidedSession in try provider.resolve() }
        #expect(read === (try mine.resolve(ProvidedSession.self)))
    }

    @Test("it does not keep its container alive; a read after the container is gone throws containerReleased")
    func doesNotRetainTheContainer() {
        weak var released: InjectionContainer?
        let provider: InjectProvider<ProvidedSession> = {
            let container = InjectionContainer()
            container.register(ProvidedSession.self) { ProvidedSession() }
            released = container
            return InjectionManager.withContainer(container) { InjectProvider(ProvidedSession.self) }
        }()
        #expect(released == nil, "the provider kept its container alive")
        let error = #expect(throws: InjectionError.self) { try provider.resolve() }
        #expect(error?.kind == .containerReleased)
        #expect(error?.description.contains("InjectProvider<ProvidedSession> was read after its container was released") == true)
    }

    @Test("a missing registration throws from resolve() with the type's name")
    func missing() {
        let container = InjectionContainer()
        let live = InjectionManager.withContainer(container) { InjectProvider(ProvidedSession.self) }
        let error = #expect(throws: InjectionError.self) { try live.resolve() }
        #expect(error?.kind == .notRegistered)
        #expect(error?.typeName == "ProvidedSession")
    }
}
