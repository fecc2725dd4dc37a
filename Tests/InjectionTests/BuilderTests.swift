import Foundation
@_spi(Testing) import InjectionTesting
import Testing

// Builders: opaque construction from a parameter model (jmfieldman/Inject's `Builder`).

protocol Card: AnyObject, Sendable { var userID: String { get } }

struct CardBuilder: Builder, Sendable {
    typealias BuildResult = any Card
    let userID: String
}

final class CardImpl: Card, Buildable {
    let userID: String
    let api: any API
    init(builder: CardBuilder) {
        userID = builder.userID
        api = Inject()
    }
}

/// A `Buildable` whose type is not the builder's `BuildResult`: a registration mistake.
final class NotACard: Buildable, Sendable {
    init(builder: CardBuilder) {}
}

/// A node of a tree that builds its children with the same builder: recursion, not a cycle.
struct TreeBuilder: Builder, Sendable {
    typealias BuildResult = Tree
    let depth: Int
}

final class Tree: Sendable {
    let children: [Tree]
    init(builder: TreeBuilder) {
        children = builder.depth == 0 ? [] : [TreeBuilder(depth: builder.depth - 1).build()]
    }
    var height: Int { 1 + (children.map(\.height).max() ?? 0) }
}

/// A node of a tree whose build closure builds its children with the same builder, and throws what their
/// builds throw (`Tree` traps instead).
struct TreeModel: Builder, Sendable {
    typealias BuildResult = TreeNode
    let depth: Int
}

final class TreeNode: Sendable {
    let children: [TreeNode]
    init(children: [TreeNode]) { self.children = children }
    var height: Int { 1 + (children.map(\.height).max() ?? 0) }
    var count: Int { 1 + children.map(\.count).reduce(0, +) }
}

@MainActor
protocol ProfileView: AnyObject, Sendable { var userID: String { get } }

struct ProfileViewBuilder: Builder, Sendable {
    typealias BuildResult = any ProfileView
    let userID: String
}

@MainActor
final class ProfileViewController: ProfileView, MainActorBuildable {
    let userID: String
    init(builder: ProfileViewBuilder) { userID = builder.userID }
}

/// Builds a string that says which build closure ran.
struct SwapBuilder: Builder, Sendable {
    typealias BuildResult = String
}

/// Runs its tasks' jobs on a serial dispatch queue of its own, not the cooperative pool: a test that holds the
/// main actor still sees such a task run, however busy the pool is with tests waiting for the main actor.
private final class QueueExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "BuilderTests.QueueExecutor")
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

@Suite("Builders")
struct BuilderTests {
    @Test("a typed build closure gets the model and makes a new instance on every build")
    func typedClosure() throws {
        let container = InjectionContainer()
        container.register((any API).self) { LiveAPI() }
        container.register(CardBuilder.self) { builder in CardImpl(builder: builder) }
        try InjectionManager.withContainer(container) {
            let first = CardBuilder(userID: "42").build()
            let second = try InjectionManager.build(CardBuilder(userID: "7"))
            #expect(first.userID == "42")
            #expect(second.userID == "7")
            #expect(first !== second)
            #expect(first is CardImpl)
            // The implementation's own dependency came from the same container.
            let api = try container.resolve((any API).self)
            #expect((first as? CardImpl)?.api === api)
        }
        #expect(container.isRegistered(builder: CardBuilder.self))
        #expect(!container.isRegistered(CardBuilder.self), "a builder is not a registration of the model type")
    }

    @Test("a Buildable implementation registers with building:")
    func buildableImplementation() throws {
        let container = InjectionContainer()
        container.register((any API).self) { LiveAPI() }
        container.register(CardBuilder.self, building: CardImpl.self)
        let screen = try container.build(CardBuilder(userID: "42"))
        #expect(screen.userID == "42")
        #expect(screen is CardImpl)
    }

    @Test("a Buildable that is not the BuildResult fails with a message naming both types")
    func buildableOfTheWrongType() {
        let container = InjectionContainer()
        container.register(CardBuilder.self, building: NotACard.self)
        let error = #expect(throws: InjectionError.self) { try container.build(CardBuilder(userID: "42")) }
        #expect(error?.kind == .factoryFailed)
        #expect(error?.description.contains("NotACard is not a") == true)
        #expect(error?.description.contains("Card") == true)
    }

    @Test("a missing builder throws notRegistered with the registration to add")
    func missingBuilder() {
        let container = InjectionContainer()
        let error = #expect(throws: InjectionError.self) { try container.build(CardBuilder(userID: "42")) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.typeName == "CardBuilder")
        #expect(error?.description.contains("Injection: no builder registered for CardBuilder.") == true)
        #expect(error?.description.contains("InjectionManager.register(CardBuilder.self) { builder in ... }") == true)
    }

    @Test("an unregistered builder traps through build() with that message")
    func missingBuilderTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = CardBuilder(userID: "42").build()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Injection: no builder registered for CardBuilder."))
    }

    @Test("an isolated container's fake builder is used there and nowhere else")
    func isolatedFake() throws {
        final class FakeScreen: Card { let userID = "fake" }
        let live = InjectionContainer(), test = InjectionContainer()
        live.register((any API).self) { LiveAPI() }
        live.register(CardBuilder.self) { builder in CardImpl(builder: builder) }
        test.register(CardBuilder.self) { _ in FakeScreen() }
        InjectionManager.withContainer(test) {
            #expect(CardBuilder(userID: "42").build().userID == "fake")
        }
        #expect(try live.build(CardBuilder(userID: "42")).userID == "42")
    }

    @Test("the error chain runs through the builder to what its implementation injects")
    func chainThroughBuilder() {
        let container = InjectionContainer()
        // CardImpl injects API with Inject(), which would trap: this closure resolves with `try` instead.
        container.register(CardBuilder.self) { builder in
            _ = try InjectionManager.resolve((any API).self)
            return CardImpl(builder: builder)
        }
        let error = InjectionManager.withContainer(container) {
            #expect(throws: InjectionError.self) { try InjectionManager.build(CardBuilder(userID: "1")) }
        }
        #expect(error?.kind == .notRegistered)
        #expect(error?.chain == ["CardBuilder", "API"])
    }

    @Test("a cycle through a builder is reported with the builder on its path")
    func cycleThroughBuilder() {
        final class Root: Sendable {
            init() throws { _ = try InjectionManager.build(RootScreenBuilder()) }
        }
        struct RootScreenBuilder: Builder { typealias BuildResult = Int }
        let container = InjectionContainer()
        container.register(Root.self) { try Root() }
        container.register(RootScreenBuilder.self) { _ in
            _ = try InjectionManager.resolve(Root.self)
            return 1
        }
        let error = InjectionManager.withContainer(container) {
            #expect(throws: InjectionError.self) { try InjectionManager.resolve(Root.self) }
        }
        #expect(error?.kind == .cycle)
        #expect(error?.chain.contains { $0.hasSuffix("RootScreenBuilder") } == true)
        #expect(error?.chain.first?.hasSuffix("Root") == true && error?.chain.last?.hasSuffix("Root") == true)
    }

    @Test("a builder that builds itself with another model is recursion, not a cycle")
    func recursiveBuilder() throws {
        let container = InjectionContainer()
        container.register(TreeBuilder.self) { builder in Tree(builder: builder) }
        let tree = try InjectionManager.withContainer(container) { try InjectionManager.build(TreeBuilder(depth: 5)) }
        #expect(tree.height == 6)
    }

    // Builders.md: "A builder may build itself with another model (a tree of nodes, a list of rows): that is
    // recursion, not a cycle." Also when the registration its nested builds find is not the one the first
    // level read: another thread registered the builder again meanwhile.
    @Test("a builder that builds itself is recursion, not a cycle, also while another thread registers it again")
    func recursiveBuilderRegisteredAgain() throws {
        let container = InjectionContainer()
        let firstLevelRuns = Gate(), registeredAgain = Gate(), waited = Collector<Bool>()
        let build: @Sendable (TreeModel) throws -> TreeNode = { model in
            if model.depth == 2 {  // The first level builds its children only once the builder is registered again.
                firstLevelRuns.open()
                waited.append(registeredAgain.wait())
            }
            let children = model.depth == 0 ? [] : try (0..<2).map { _ in try InjectionManager.build(TreeModel(depth: model.depth - 1)) }
            return TreeNode(children: children)
        }
        container.register(TreeModel.self, factory: build)
        onThread {
            if firstLevelRuns.wait() { container.register(TreeModel.self, factory: build) }  // The same closure.
            registeredAgain.open()
        }
        let tree = try container.build(TreeModel(depth: 2))
        #expect(waited.values == [true], "the first level's closure ran while the builder was registered again")
        #expect(tree.height == 3 && tree.count == 7, "three levels, two children per node: height \(tree.height), \(tree.count) nodes")
    }

    @Test("BuilderManager.register takes jmfieldman/Inject's (Any) closure")
    func injectStyleRegistration() {
        let container = InjectionContainer()
        container.register((any API).self) { LiveAPI() }
        let viaManager = InjectionManager.withContainer(container) { () -> String? in
            BuilderManager.register(CardBuilder.self) { builder in
                CardImpl(builder: builder as! CardBuilder)
            }
            #expect(CardBuilder(userID: "9").build().userID == "9")
            return try? InjectionManager.build(CardBuilder(userID: "8")).userID
        }
        #expect(viaManager == "8")
        #expect(container.isRegistered(builder: CardBuilder.self))
        #expect(!InjectionManager.sharedContainer.isRegistered(builder: CardBuilder.self))
    }

    @Test("a main-actor builder runs on the main actor, fails clearly off it, and buildAsync hops")
    func mainActorBuilder() async throws {
        let container = InjectionContainer()
        container.register(ProfileViewBuilder.self, building: ProfileViewController.self)
        let onMain = try await MainActor.run { try container.build(ProfileViewBuilder(userID: "1")).userID }
        #expect(onMain == "1")
        let error = await Task.detached {
            #expect(throws: InjectionError.self) { try container.build(ProfileViewBuilder(userID: "2")) }
        }.value
        #expect(error?.kind == .wrongIsolation)
        #expect(error?.description.contains("buildAsync") == true)
        let hopped = try await Task.detached { try await container.buildAsync(ProfileViewBuilder(userID: "3")) }.value
        let userID = await MainActor.run { hopped.userID }
        #expect(userID == "3")
    }

    @Test("a main-actor build closure registers with isolation: MainActor.shared")
    func mainActorClosure() async throws {
        let container = InjectionContainer()
        container.register(ProfileViewBuilder.self, isolation: MainActor.shared) { builder in
            ProfileViewController(builder: builder)
        }
        let userID = try await MainActor.run { try container.build(ProfileViewBuilder(userID: "4")).userID }
        #expect(userID == "4")
    }

    @Test("the graph shows a builder as transient with what its implementation injects; verify() skips it")
    func graphAndVerify() throws {
        let container = InjectionContainer()
        container.register((any API).self) { LiveAPI() }
        container.register(CardBuilder.self, building: CardImpl.self)
        try container.verify()
        _ = try container.build(CardBuilder(userID: "1"))
        let graph = container.dependencyGraph()
        let node = graph.nodes.first { $0.name == "CardBuilder" }
        #expect(node?.lifetime == .transient)
        #expect(graph.edges.contains { $0.from == "CardBuilder" && $0.to == "API" })
        container.unregister(builder: CardBuilder.self)
        #expect(!container.isRegistered(builder: CardBuilder.self))
    }

    @Test("buildAsync runs the closure whose isolation it checked, even if the builder is registered again meanwhile")
    @MainActor
    func buildAsyncReadsTheClosureOnce() async throws {
        let container = InjectionContainer()
        container.register(SwapBuilder.self, isolation: MainActor.shared) { _ in "main-actor closure" }
        let build = Task.detached(executorPreference: QueueExecutor()) { try await container.buildAsync(SwapBuilder()) }
        // This test holds the main actor until the new registration, so the build has read its closure and
        // waits to hop to the main actor. (The build runs off the cooperative pool, which other tests may
        // fill with threads that wait for the main actor.)
        #expect(waitUntil { InjectionProbe.holdsBuildClosure(for: SwapBuilder.self, in: container) })
        container.register(SwapBuilder.self) { _ in "plain closure" }
        let built = try await build.value
        #expect(built == "main-actor closure")
    }

    @Test("the graph keeps the edges of every build: a later build with another model may inject more")
    func builderEdgesFromEveryBuild() throws {
        let container = InjectionContainer()
        container.register(TreeBuilder.self) { Tree(builder: $0) }
        _ = try container.build(TreeBuilder(depth: 0))   // a leaf builds nothing
        #expect(container.dependencyGraph().edges.isEmpty)
        _ = try container.build(TreeBuilder(depth: 1))   // a node builds its child
        let edges = container.dependencyGraph().edges
        #expect(edges == [.init(from: "TreeBuilder", to: "TreeBuilder")])
    }
}
