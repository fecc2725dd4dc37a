import Injection
import InjectionTesting
import Testing

// Docs/Migrating.md, "From Resolver": the After side of each recipe, compiled and tested.

// MARK: - registerAllServices, scopes, @Injected

final class OrdersService: Sendable {
    let api: any WebAPI
    init(api: any WebAPI = Inject()) { self.api = api }
}

final class ReceiptPrinter: Sendable {}

final class PhotoCache: Sendable {}

func registerOrderServices() {
    InjectionManager.register((any WebAPI).self, lifetime: .singleton) { LiveWebAPI() }              // .application
    InjectionManager.register(OrdersService.self) { OrdersService() }                          // .cached
    InjectionManager.register(PhotoCache.self, lifetime: .weak) { PhotoCache() }               // .shared
    InjectionManager.register(ReceiptPrinter.self, lifetime: .transient) { ReceiptPrinter() }  // .graph, .unique
}

final class OrdersViewModel {
    let orders: OrdersService = Inject()            // @Injected var orders: OrdersService
    let printer = InjectLazy(ReceiptPrinter.self)   // @LazyInjected var printer: ReceiptPrinter
}

// MARK: - Resolver.resolve() and Resolver.optional()

func currentOrders() -> OrdersService {
    Inject()                                        // let orders: OrdersService = Resolver.resolve()
}

func ordersIfRegistered() -> OrdersService? {
    try? InjectionManager.resolve(OrdersService.self)   // let orders: OrdersService? = Resolver.optional()
}

// MARK: - Resolver.main, Resolver.root and child containers

/// Runs `body` with the current registrations plus a mock API, for this task and its child tasks only.
func withMockAPI<Result>(_ body: () -> Result) -> Result {
    let mock = InjectionContainer(copying: InjectionManager.currentContainer)
    mock.register((any WebAPI).self) { MockWebAPI() }
    return InjectionManager.withContainer(mock, operation: body)
}

// MARK: - Tests

@Suite("Resolver recipes", .isolatedInjection)
struct ResolverRecipesTests {
    @Test("registerAllServices becomes a function called at launch; scopes map to lifetimes")
    func registrationAndScopes() throws {
        registerOrderServices()
        try InjectionManager.verify()
        let orders = currentOrders()
        #expect(currentOrders() === orders)
        #expect(Inject(ReceiptPrinter.self) !== Inject(ReceiptPrinter.self))
        InjectionManager.resetCurrentContainer()       // ResolverScope.cached.reset()
        #expect(currentOrders() !== orders)
    }

    @Test("@Injected becomes Inject(), @LazyInjected becomes InjectLazy")
    func injected() {
        registerOrderServices()
        let viewModel = OrdersViewModel()
        #expect(viewModel.orders === currentOrders())
        #expect(viewModel.printer.value === viewModel.printer.value)   // resolved once, then kept
    }

    @Test("Resolver.optional() becomes try? resolve(T.self): nil when not registered")
    func optional() {
        #expect(ordersIfRegistered() == nil)
        registerOrderServices()
        #expect(ordersIfRegistered() === currentOrders())
    }

    @Test("try? resolve() with the type left to inference asks for the Optional itself")
    func optionalInference() {
        registerOrderServices()
        let inferred: OrdersService? = try? InjectionManager.resolve()
        #expect(inferred == nil)                         // Value was inferred as OrdersService?, which is not registered
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve(OrdersService?.self) }
        #expect(error?.description.contains("If you meant the non-optional type") == true)
    }

    @Test("a copied container bound with withContainer replaces swapping Resolver.root")
    func childContainer() {
        registerOrderServices()
        let live = currentOrders()
        let mocked = withMockAPI { currentOrders() }
        #expect(mocked.api is MockWebAPI)
        #expect(mocked !== live)                        // the copy builds its own instances
        #expect(currentOrders() === live)               // outside the closure: unchanged
        #expect(currentOrders().api is LiveWebAPI)
    }
}
