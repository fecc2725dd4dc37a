import Injection

// The differential test's app (DifferentialTests): a registration function that uses every registration spelling
// the library has, run for real, and read by the scanner from this file. What comments and literals say, neither
// registers; what an interpolation's code says, both do.

protocol DiffAPI: Sendable {}
protocol DiffAuth: Sendable {}
protocol DiffStore: Sendable {}
final class DiffLiveAPI: DiffAPI {}
final class DiffSession: DiffAuth {}
final class DiffSQLite: DiffStore {}
final class DiffClock: Sendable {}
final class DiffLogger: Sendable {}
final class DiffCache: Sendable {}
final class DiffSeed: Sendable {}
final class DiffExtra: Sendable {}
final class DiffConfig: Sendable {}
final class DiffDecoy: Sendable {}
final class DiffNever: Sendable {}
final class DiffLoader: Sendable {
    init() async {}
}
@MainActor final class DiffRouter {}
struct DiffScreenBuilder: Builder {
    typealias BuildResult = String
    let id: Int
}
struct DiffBadgeBuilder: Builder {
    typealias BuildResult = String
    let count: Int
}
enum DiffPrimary: InjectionKey { typealias Value = any DiffStore }
typealias DiffStoreAlias = any DiffStore

/// The seed's `unsafeRegister`, reached through a protocol requirement (a direct call is deprecated: a warning).
protocol DiffSeedRegistering {
    static func unsafeRegister<Value>(
        _ type: Value.Type, file: StaticString, _ resolutionFunction: @escaping @Sendable () -> Value)
}
extension InjectionManager: DiffSeedRegistering {}

func registerSeed<Manager: DiffSeedRegistering>(_: Manager.Type) {
    Manager.unsafeRegister(DiffSeed.self, file: #fileID) { DiffSeed() }
}

extension InjectionContainer {
    func registerDiffExtras() {
        register(DiffExtra.self) { DiffExtra() }
    }
}

extension InjectionManager {
    static func registerDiffConfig() {
        register(DiffConfig.self, lifetime: .transient) { DiffConfig() }
    }
}

/// Registers the differential app's services in `container`, which is current.
func registerDifferentialApp(_ container: InjectionContainer) {
    InjectionManager.register((any DiffAPI).self) { DiffLiveAPI() }
    InjectionManager.register(DiffSession.self, lifetime: .singleton) { DiffSession() }
        .implements((any DiffAuth).self) { $0 }
    InjectionManager.register(DiffClock.self, instance: DiffClock())
    InjectionManager.register(DiffRouter.self, isolation: MainActor.shared) { DiffRouter() }
    InjectionManager.registerAsync(DiffLoader.self) { await DiffLoader() }
    InjectionManager.register(DiffPrimary.self) { DiffSQLite() }
    InjectionManager.register(DiffStoreAlias.self) { DiffSQLite() }
    InjectionManager.register(DiffScreenBuilder.self) { builder in "screen \(builder.id)" }
    BuilderManager.register(DiffBadgeBuilder.self) { builder in "\((builder as? DiffBadgeBuilder)?.count ?? 0) new" }
    registerSeed(InjectionManager.self)
    container.registerDiffExtras()
    InjectionManager.registerDiffConfig()
    container.register(DiffCache.self) { DiffCache() }
    _ = "\(InjectionManager.register(DiffLogger.self) { DiffLogger() })"
    _ = "InjectionManager.register(DiffDecoy.self) { DiffDecoy() }"
    _ = #"InjectionManager.register(DiffDecoy.self) \(DiffDecoy())"#
    _ = """
        InjectionManager.register(DiffNever.self) { DiffNever() }
        """
    // InjectionManager.register(DiffDecoy.self) { DiffDecoy() }
    /* InjectionManager.register(DiffNever.self) /* nested */ { DiffNever() } */
}
