import Injection
import InjectionTesting
import Testing

// A `.singleton` (or `.weak`) whose factory resolves a `.scoped` type keeps the instance of the scope that built
// it after a reset: `verify()` reports each such pair as a captiveDependency, the graph marks its edges, and
// nothing is reported at run time. A provider or a lazy handle the factory makes is not one.

private final class CapSession: Sendable {}
private final class CapTracker: Sendable {
    let session: CapSession
    init(session: CapSession = Inject()) { self.session = session }
}
private final class CapToken: Sendable {
    let session: CapSession
    init(session: CapSession = Inject()) { self.session = session }
}
/// Holds the session through a transient token.
private final class CapAnalytics: Sendable {
    let token: CapToken
    init(token: CapToken = Inject()) { self.token = token }
}
/// Holds handles, which follow the session: not captives.
private final class CapFeed: Sendable {
    let session = InjectProvider(CapSession.self)
    let lazySession = InjectLazy(CapSession.self)
}
/// A singleton that holds a singleton: fine.
private final class CapClock: Sendable {}
private final class CapScheduler: Sendable {
    let clock: CapClock
    init(clock: CapClock = Inject()) { self.clock = clock }
}

@Suite("Captive dependencies", .isolatedInjection)
struct CaptiveDependencyTests {
    @Test("verify() reports a singleton that holds a scoped service, directly or through a transient, naming both and the fix")
    func verifyReportsCaptives() throws {
        let container = InjectionContainer()
        container.register(CapSession.self) { CapSession() }
        container.register(CapTracker.self, lifetime: .singleton) { CapTracker() }
        container.register(CapToken.self, lifetime: .transient) { CapToken() }
        container.register(CapAnalytics.self, lifetime: .weak) { CapAnalytics() }
        let error = #expect(throws: InjectionError.self) { try container.verify() }
        let problems = try #require(error?.problems)
        #expect(problems.map(\.kind) == [.captiveDependency, .captiveDependency])
        #expect(problems.map(\.chain) == [["CapAnalytics", "CapToken", "CapSession"], ["CapTracker", "CapSession"]])
        let tracker = try #require(problems.last)
        #expect(tracker.description == """
            Injection: CapTracker is .singleton but its factory resolves CapSession, which is .scoped: after a reset, \
            CapTracker still holds the CapSession of the scope that built it (after logout, the old user's). Make \
            CapTracker .scoped, or hold an InjectProvider<CapSession> and resolve through it when it is needed.
            """)
        #expect(problems.first?.description.contains("through CapAnalytics → CapToken → CapSession") == true)
        // What the message says is true: after a reset the singleton still holds the old session.
        let held = try container.resolve(CapTracker.self).session
        container.reset()
        #expect(try container.resolve(CapTracker.self).session === held)
        #expect(try container.resolve(CapSession.self) !== held)
    }

    @Test("handles, a singleton holding a singleton, and a scoped holder are no captives")
    func noFalseCaptives() throws {
        let container = InjectionContainer()
        container.register(CapSession.self) { CapSession() }
        container.register(CapFeed.self, lifetime: .singleton) { CapFeed() }
        container.register(CapClock.self, lifetime: .singleton) { CapClock() }
        container.register(CapScheduler.self, lifetime: .singleton) { CapScheduler() }
        container.register(CapTracker.self) { CapTracker() }
        try container.verify()
        // The provider follows the session.
        let feed = try container.resolve(CapFeed.self)
        let before = feed.session.value
        container.reset()
        #expect(feed.session.value !== before)
    }

    @Test("dependencyGraph() draws a captive dependency's edges red, labelled captive, in DOT and Mermaid")
    func graphMarksCaptives() throws {
        let container = InjectionContainer()
        container.register(CapSession.self) { CapSession() }
        container.register(CapClock.self, lifetime: .singleton) { CapClock() }
        container.register(CapScheduler.self, lifetime: .singleton) { CapScheduler() }
        container.register(CapTracker.self, lifetime: .singleton) { CapTracker() }
        #expect(throws: InjectionError.self) { try container.verify() }
        let graph = container.dependencyGraph()
        #expect(graph.captiveEdges == [.init(from: "CapTracker", to: "CapSession")])
        #expect(graph.dot.contains("\"CapTracker\" -> \"CapSession\" [color=red, fontcolor=red, label=\"captive\"];"))
        #expect(graph.dot.contains("\"CapScheduler\" -> \"CapClock\";"))
        #expect(graph.mermaid.contains("-->|captive|"))
        #expect(graph.mermaid.contains("linkStyle 1 stroke:#d00,color:#d00"), "\(graph.mermaid)")
    }

    @Test("a captive dependency is not reported at run time: resolving it is silent")
    func noRunTimeReport() throws {
        let container = InjectionContainer()
        let lines = Collector<String>()
        container.diagnosticsHandler = { lines.append($0) }
        container.register(CapSession.self) { CapSession() }
        container.register(CapTracker.self, lifetime: .singleton) { CapTracker() }
        _ = try container.resolve(CapTracker.self)
        container.reset()
        _ = try container.resolve(CapTracker.self)
        #expect(lines.values.isEmpty)
    }
}
