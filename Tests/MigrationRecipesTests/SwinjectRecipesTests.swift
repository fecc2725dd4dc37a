import Injection
import InjectionTesting
import Testing

// Docs/Migrating.md, "From Swinject": the After side of each recipe, compiled and tested.

// MARK: - Registering a service that needs another

protocol WeatherService: Sendable {
    func forecast() -> String
}

final class LiveWeatherService: WeatherService {
    private let api: any WebAPI
    init(api: any WebAPI = Inject()) { self.api = api }
    func forecast() -> String { api.get("/forecast") }
}

func registerWeatherServices() {
    InjectionManager.register((any WebAPI).self) { LiveWebAPI() }
    InjectionManager.register((any WeatherService).self) { LiveWeatherService() }
}

/// The same registration, but a missing `WebAPI` is a thrown error instead of a stopped process.
func registerWeatherServiceThrowing() {
    InjectionManager.register((any WeatherService).self) {
        try LiveWeatherService(api: InjectionManager.resolve())
    }
}

// MARK: - Object scopes

final class HTTPClient: Sendable {}       // .inObjectScope(.container), never reset
final class ImageCache: Sendable {}       // .inObjectScope(.container), reset at logout
final class PriceFormatter: Sendable {}   // .inObjectScope(.transient)
final class AudioPlayer: Sendable {}      // .inObjectScope(.weak)

final class CheckoutFlow: Sendable {      // .inObjectScope(.graph), Swinject's default
    let cache: ImageCache
    init(cache: ImageCache = Inject()) { self.cache = cache }
}

func registerObjectScopes() {
    InjectionManager.register(HTTPClient.self, lifetime: .singleton) { HTTPClient() }
    InjectionManager.register(ImageCache.self) { ImageCache() }   // .scoped, the default
    InjectionManager.register(PriceFormatter.self, lifetime: .transient) { PriceFormatter() }
    InjectionManager.register(AudioPlayer.self, lifetime: .weak) { AudioPlayer() }
    InjectionManager.register(CheckoutFlow.self, lifetime: .transient) { CheckoutFlow() }
}

// MARK: - Named registrations

enum PrimaryStorage: InjectionKey { typealias Value = any Storage }
enum CacheStorage: InjectionKey { typealias Value = any Storage }

func registerDatabases() {
    InjectionManager.register(PrimaryStorage.self) { SQLiteStorage(path: "main.db") }
    InjectionManager.register(CacheStorage.self, lifetime: .singleton) { SQLiteStorage(path: "cache.db") }
}

final class SyncEngine {
    let primary: any Storage
    let cache: any Storage

    init(primary: any Storage = Inject(PrimaryStorage.self), cache: any Storage = Inject(CacheStorage.self)) {
        self.primary = primary
        self.cache = cache
    }
}

// MARK: - initCompleted

final class ListDataSource {
    weak var delegate: ListViewController?
}

final class ListViewController {
    let provider: ListDataSource
    init(provider: ListDataSource = Inject()) { self.provider = provider }
}

func registerList() {
    InjectionManager.register(ListDataSource.self) {
        ListDataSource()
    } postConstruction: { provider in
        provider.delegate = Inject(ListViewController.self)
    }
    InjectionManager.register(ListViewController.self) { ListViewController() }
}

// MARK: - resetObjectScope

final class ChatSocket: InjectionDisposable {
    private(set) var isOpen = true
    func dispose() { isOpen = false }
}

func registerChat() {
    InjectionManager.register(ChatSocket.self) { ChatSocket() }
    InjectionManager.register(HTTPClient.self, lifetime: .singleton) { HTTPClient() }
}

func logOut() {
    InjectionManager.resetCurrentContainer()
}

// MARK: - Assemblies

// In the Networking module:
func registerNetworking() {
    InjectionManager.register((any WebAPI).self, lifetime: .singleton) { LiveWebAPI() }
}

// In the Weather module:
func registerWeather() {
    InjectionManager.register((any WeatherService).self) { LiveWeatherService() }
}

// In the app, at launch: what `Assembler([...])` did.
func registerAppServices() {
    registerNetworking()
    registerWeather()
}

// MARK: - Tests

@Suite("Swinject recipes", .isolatedInjection)
struct SwinjectRecipesTests {
    @Test("a factory gets its dependencies from Inject() at the constructor's default argument")
    func registerWithDependencies() {
        registerWeatherServices()
        let weather: any WeatherService = Inject()
        #expect(weather.forecast() == "200 OK /forecast")
    }

    @Test("a missing dependency is an error that names the chain, not a nil to force-unwrap")
    func missingDependencyIsAnError() {
        registerWeatherServiceThrowing()
        let error = #expect(throws: InjectionError.self) { try InjectionManager.resolve((any WeatherService).self) }
        #expect(error?.kind == .notRegistered)
        #expect(error?.chain.count == 2)
        #expect(error?.chain.first?.hasSuffix("WeatherService") == true)
        #expect(error?.chain.last?.hasSuffix("WebAPI") == true)
        #expect(error?.description.hasPrefix("Injection: no registration for") == true)
    }

    @Test("object scopes map to lifetimes: singleton, scoped, transient and weak")
    func objectScopes() {
        registerObjectScopes()
        let client = Inject(HTTPClient.self), cache = Inject(ImageCache.self)
        #expect(Inject(HTTPClient.self) === client)
        #expect(Inject(ImageCache.self) === cache)
        #expect(Inject(PriceFormatter.self) !== Inject(PriceFormatter.self))

        InjectionManager.resetCurrentContainer()
        #expect(Inject(HTTPClient.self) === client)     // .singleton survives the reset
        #expect(Inject(ImageCache.self) !== cache)      // .scoped does not

        var player: AudioPlayer? = Inject(AudioPlayer.self)
        #expect(Inject(AudioPlayer.self) === player)    // shared while held
        weak let released = player
        player = nil
        #expect(released == nil)                        // the container did not keep it alive
    }

    @Test("a transient object stands in for .graph: a new one per resolve, its parts under their own lifetimes")
    func graphScope() {
        registerObjectScopes()
        let first = Inject(CheckoutFlow.self), second = Inject(CheckoutFlow.self)
        #expect(first !== second)
        #expect(first.cache === second.cache)           // .scoped part: shared for the whole session, not one graph
    }

    @Test("named registrations become typed keys: two keys, two instances of one type")
    func namedRegistrations() {
        registerDatabases()
        let engine = SyncEngine()
        #expect(engine.primary.path == "main.db")
        #expect(engine.cache.path == "cache.db")
        #expect(engine.primary !== engine.cache)
        #expect(Inject(PrimaryStorage.self) === engine.primary)
        #expect(!InjectionManager.isRegistered((any Storage).self))   // the bare type is not registered
    }

    @Test("postConstruction closes the cycle that initCompleted closed, in either resolve order", arguments: [true, false])
    func initCompleted(providerFirst: Bool) {
        registerList()
        let provider: ListDataSource, controller: ListViewController
        if providerFirst {
            provider = Inject()
            controller = Inject()
        } else {
            controller = Inject()
            provider = Inject()
        }
        #expect(provider.delegate === controller)
        #expect(controller.provider === provider)
    }

    @Test("resetCurrentContainer evicts and disposes the session, keeps singletons")
    func resetObjectScope() {
        InjectionManager.currentContainer.tracksEvictedInstances = true  // On by default in debug builds only.
        registerChat()
        let socket = Inject(ChatSocket.self), client = Inject(HTTPClient.self)
        logOut()
        #expect(!socket.isOpen)
        #expect(Inject(ChatSocket.self) !== socket)
        #expect(Inject(HTTPClient.self) === client)
        #expect(InjectionManager.liveInstancesFromPreviousScopes().contains { $0.hasSuffix("ChatSocket") })
        withExtendedLifetime(socket) {}
    }

    @Test("assemblies become registration functions, and verify() checks the whole graph")
    func assemblies() throws {
        registerAppServices()
        try InjectionManager.verify()
        #expect(Inject((any WeatherService).self).forecast() == "200 OK /forecast")
    }
}
