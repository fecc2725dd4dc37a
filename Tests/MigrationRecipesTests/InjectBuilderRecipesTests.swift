import Injection
import InjectionTesting
import Testing

// Docs/Migrating.md, "From jmfieldman/Inject's Builder": the After side of each recipe, compiled and tested.

// MARK: - API module

protocol ReceiptScreen: AnyObject, Sendable {
    var orderID: Int { get }
}

struct ReceiptScreenBuilder: Builder {
    typealias BuildResult = any ReceiptScreen
    let orderID: Int
}

// MARK: - Implementation module

final class ReceiptScreenImpl: ReceiptScreen, Buildable {
    let orderID: Int
    let api: any WebAPI

    init(builder: ReceiptScreenBuilder) {
        orderID = builder.orderID
        api = Inject()
    }
}

// MARK: - Composition root

/// Step 1: Inject's registration compiles as it is.
func registerReceiptScreenAsInInject() {
    BuilderManager.register(ReceiptScreenBuilder.self) { builder in
        ReceiptScreenImpl(builder: builder as! ReceiptScreenBuilder)
    }
}

/// Step 2: the typed closure, with no cast.
func registerReceiptScreen() {
    InjectionManager.register(ReceiptScreenBuilder.self) { builder in ReceiptScreenImpl(builder: builder) }
}

/// Step 3, for a `Buildable` implementation: no closure at all.
func registerReceiptScreenBuildable() {
    InjectionManager.register(ReceiptScreenBuilder.self, building: ReceiptScreenImpl.self)
}

@Suite("Recipes: from Inject's Builder", .isolatedInjection)
struct InjectBuilderRecipesTests {
    @Test("each registration form builds the implementation from the model, with its own dependencies", arguments: [
        registerReceiptScreenAsInInject, registerReceiptScreen, registerReceiptScreenBuildable,
    ])
    func registrationForms(register: @Sendable () -> Void) throws {
        InjectionManager.register((any WebAPI).self) { LiveWebAPI() }
        register()
        let screen = ReceiptScreenBuilder(orderID: 7).build()   // as in Inject
        #expect(screen.orderID == 7)
        #expect((screen as? ReceiptScreenImpl)?.api.get("/r") == "200 OK /r")
        #expect(try InjectionManager.build(ReceiptScreenBuilder(orderID: 8)).orderID == 8)
    }

    @Test("a test registers a fake builder in its own container")
    func fakeBuilder() {
        final class FakeReceipt: ReceiptScreen { let orderID = -1 }
        InjectionManager.register(ReceiptScreenBuilder.self) { _ in FakeReceipt() }
        #expect(ReceiptScreenBuilder(orderID: 7).build().orderID == -1)
    }
}
