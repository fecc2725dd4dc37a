import Injection
import InjectionTesting
import Testing

// `MainActorBuilder`: a builder model whose `build()` is `@MainActor`. That a build from nonisolated
// synchronous code does not compile is checked by `.ci/check-compile-failures`
// (Tests/CompileChecks/MainActorBuilderOffMain), since a test cannot contain code that does not compile.

@MainActor
protocol DetailScreen: AnyObject, Sendable {
    var itemID: Int { get }
    /// Which registration built it.
    var source: String { get }
}

struct DetailScreenBuilder: MainActorBuilder, Sendable {
    typealias BuildResult = any DetailScreen
    let itemID: Int
}

@MainActor
final class DetailViewController: DetailScreen, MainActorBuildable {
    let itemID: Int
    let source: String
    init(builder: DetailScreenBuilder) { (itemID, source) = (builder.itemID, "MainActorBuildable") }
    init(builder: DetailScreenBuilder, source: String) { (itemID, self.source) = (builder.itemID, source) }
}

/// Builds `model` from nonisolated async code: `await` hops to the main actor for the `@MainActor` `build()`.
nonisolated func buildFromNonisolatedAsyncCode(_ model: DetailScreenBuilder) async -> any DetailScreen {
    await model.build()
}

@Suite("MainActorBuilder", .isolatedInjection)
@MainActor
struct MainActorBuilderTests {
    @Test("build() on the main actor returns the MainActorBuildable implementation registered on the manager")
    func buildableOnTheManager() {
        InjectionManager.register(DetailScreenBuilder.self, building: DetailViewController.self)
        let screen = DetailScreenBuilder(itemID: 7).build()
        #expect(screen is DetailViewController)
        #expect(screen.itemID == 7)
        #expect(screen.source == "MainActorBuildable")
        // Registered in this test's isolated container, not the process-wide one.
        #expect(InjectionManager.currentContainer.isRegistered(builder: DetailScreenBuilder.self))
        #expect(!InjectionManager.sharedContainer.isRegistered(builder: DetailScreenBuilder.self))
    }

    @Test("build() on the main actor runs the closure registered on the manager with isolation: MainActor.shared")
    func mainActorClosureOnTheManager() {
        InjectionManager.register(DetailScreenBuilder.self, isolation: MainActor.shared) { builder in
            DetailViewController(builder: builder, source: "isolation: MainActor.shared")
        }
        let first = DetailScreenBuilder(itemID: 1).build()
        let second = DetailScreenBuilder(itemID: 2).build()
        #expect(first.source == "isolation: MainActor.shared")
        #expect((first.itemID, second.itemID) == (1, 2))
        #expect(first !== second, "a builder makes a new instance on every build")
        #expect(!InjectionManager.sharedContainer.isRegistered(builder: DetailScreenBuilder.self))
    }

    @Test("build() uses the current container: each container's registration, in either form, builds there")
    func currentContainer() {
        let buildable = InjectionContainer(), closure = InjectionContainer()
        buildable.register(DetailScreenBuilder.self, building: DetailViewController.self)
        closure.register(DetailScreenBuilder.self, isolation: MainActor.shared) { builder in
            DetailViewController(builder: builder, source: "container closure")
        }
        let fromBuildable = InjectionManager.withContainer(buildable) { DetailScreenBuilder(itemID: 3).build() }
        let fromClosure = InjectionManager.withContainer(closure) { DetailScreenBuilder(itemID: 4).build() }
        #expect((fromBuildable.source, fromBuildable.itemID) == ("MainActorBuildable", 3))
        #expect((fromClosure.source, fromClosure.itemID) == ("container closure", 4))
        // This test's own container has neither.
        #expect(!InjectionManager.currentContainer.isRegistered(builder: DetailScreenBuilder.self))
    }

    @Test("a fake registered in the test's isolated container replaces the launch registration")
    func fakeInIsolatedContainer() {
        // The "app" registers in a container this test's is a copy of.
        let app = InjectionContainer()
        app.register(DetailScreenBuilder.self, building: DetailViewController.self)
        let test = InjectionContainer(copying: app)
        test.register(DetailScreenBuilder.self, isolation: MainActor.shared) { builder in
            DetailViewController(builder: builder, source: "fake")
        }
        #expect(InjectionManager.withContainer(test) { DetailScreenBuilder(itemID: 5).build() }.source == "fake")
        #expect(InjectionManager.withContainer(app) { DetailScreenBuilder(itemID: 5).build() }.source == "MainActorBuildable")
    }

    @Test("a plain build closure registered for a MainActorBuilder runs on the main actor")
    func plainClosure() {
        InjectionManager.register(DetailScreenBuilder.self) { builder in
            // `assumeIsolated` traps off the main actor (Thread.isMainThread does not tell: on Linux the main
            // actor's jobs may run on the thread that drains the main dispatch queue).
            MainActor.assumeIsolated { DetailViewController(builder: builder, source: "plain closure") }
        }
        #expect(DetailScreenBuilder(itemID: 6).build().source == "plain closure")
    }

    @Test("await build() from nonisolated async code hops to the main actor and builds")
    func awaitFromNonisolatedCode() async {
        InjectionManager.register(DetailScreenBuilder.self, building: DetailViewController.self)
        let screen = await buildFromNonisolatedAsyncCode(DetailScreenBuilder(itemID: 8))
        #expect((screen.source, screen.itemID) == ("MainActorBuildable", 8))
    }

    @Test("the throwing API reports a missing MainActorBuilder as notRegistered, on the manager and a container")
    func notRegisteredThrows() {
        let onManager = #expect(throws: InjectionError.self) { try InjectionManager.build(DetailScreenBuilder(itemID: 1)) }
        #expect(onManager?.kind == .notRegistered)
        #expect(onManager?.typeName == "DetailScreenBuilder")
        #expect(onManager?.description.contains("no builder registered for DetailScreenBuilder") == true)
        let onContainer = #expect(throws: InjectionError.self) { try InjectionContainer().build(DetailScreenBuilder(itemID: 1)) }
        #expect(onContainer?.kind == .notRegistered)
    }

    @Test("the throwing API keeps the run-time check: off the main actor it throws wrongIsolation")
    func throwingAPIOffTheMainActor() async {
        let container = InjectionContainer()
        container.register(DetailScreenBuilder.self, building: DetailViewController.self)
        let error = await Task.detached {
            #expect(throws: InjectionError.self) { try container.build(DetailScreenBuilder(itemID: 1)) }
        }.value
        #expect(error?.kind == .wrongIsolation)
    }

    @Test("build() of an unregistered MainActorBuilder traps with the registration to add")
    func missingBuilderTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run { _ = DetailScreenBuilder(itemID: 1).build() }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: no builder registered for DetailScreenBuilder."))
        #expect(output.contains("InjectionManager.register(DetailScreenBuilder.self) { builder in ... }"))
    }
}
